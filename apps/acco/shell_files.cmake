# Writes acco's bash and zsh completions and its man page by running the built binary, which
# generates them from its command registry (`acco completion bash|zsh`, `acco man`).
# cmake -DACCO=<acco binary> -DOUT=<directory> -P shell_files.cmake
foreach(file IN ITEMS "bash-completion/completions/acco;completion;bash"
                      "zsh/site-functions/_acco;completion;zsh" "man/man1/acco.1;man")
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
