# Writes acco's bash and zsh completions and its man pages by running the built binary, which
# generates them from its command registry (`acco completion bash|zsh`, `acco man`, and
# `acco man COMMAND` for each command `acco man --list` names).
# cmake -DACCO=<acco binary> -DOUT=<directory> -P shell_files.cmake
execute_process(COMMAND "${ACCO}" man --list OUTPUT_VARIABLE commands RESULT_VARIABLE status
                ERROR_VARIABLE error)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${ACCO} man --list: exit ${status}: ${error}")
endif()
string(STRIP "${commands}" commands)
string(REPLACE "\n" ";" commands "${commands}")
# One entry per file: its path and the arguments that print it, separated by "|".
set(files "bash-completion/completions/acco|completion|bash" "zsh/site-functions/_acco|completion|zsh"
          "man/man1/acco.1|man")
foreach(command IN LISTS commands)
  list(APPEND files "man/man1/acco-${command}.1|man|${command}")
endforeach()
foreach(entry IN LISTS files)
  string(REPLACE "|" ";" file "${entry}")
  list(POP_FRONT file path)
  get_filename_component(dir "${OUT}/${path}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  # ACCO_* settings of the build's environment change nothing these commands print.
  execute_process(COMMAND "${ACCO}" ${file} OUTPUT_FILE "${OUT}/${path}.tmp"
                  RESULT_VARIABLE status ERROR_VARIABLE error)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${ACCO} ${file}: exit ${status}: ${error}")
  endif()
  file(RENAME "${OUT}/${path}.tmp" "${OUT}/${path}")
endforeach()
