#!/usr/bin/env zsh
# zsh_complete.zsh FPATH_DIR LINE: the matches zsh's completion system offers for LINE<TAB>, one
# per line, with the completion functions of FPATH_DIR first in fpath. zsh completes only inside
# its line editor, so an interactive zsh runs on a pseudo-terminal (zsh/zpty) with compadd
# wrapped to print each match; a NUL byte before and after the completion frames its output, and
# the shell exits after it. Exit 1 when no completion ran within 20 s.
zmodload zsh/zpty zsh/datetime || exit 2
local init=${TMPDIR:-/tmp}/zsh-complete-init.$$.zsh
cat >$init <<'INIT'
fpath=($ZSH_COMPLETE_FPATH $fpath)
autoload -Uz compinit && compinit -u -D
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
bindkey '^I' complete-word
null-line() { echo -n $'\0' }
compprefuncs=(null-line)
comppostfuncs=(null-line exit)
# Every match added, printed; a call that only asks for matches (-O, -A, -D) is passed through.
compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
  typeset -a hits
  builtin compadd -A hits "$@"
  local h; for h in $hits; do print -r -- "MATCH:$h"; done
}
INIT
zpty z "ZSH_COMPLETE_FPATH=$1 zsh -f -i"
zpty -w z "source $init"
zpty -w z "$2"$'\t'
float deadline=$(( EPOCHREALTIME + 20 ))
integer markers=0
local line
while (( markers < 2 && EPOCHREALTIME < deadline )); do
  zpty -rt z line || { sleep 0.05; continue }
  if [[ $line == *$'\0'* ]] && (( ++markers == 1 )); then
    line=${line#*$'\0'}
    [[ $line == *$'\0'* ]] && (( ++markers ))
  fi
  (( markers == 1 )) && [[ $line == MATCH:* ]] && print -r -- ${${line#MATCH:}%%$'\r'*}
done
zpty -d z
rm -f $init
if (( markers < 2 )); then
  print -u2 "zsh_complete.zsh: no completion of '$2' within 20 s"
  exit 1
fi
