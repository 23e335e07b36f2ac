# bash completion for ncast's programs. The options come from the program's own --help when asked, so
# they cannot drift from it; programs made of subcommands complete the command first, then its options.
_ncast_complete() {
  local cur=${COMP_WORDS[COMP_CWORD]} program=${COMP_WORDS[0]} top help
  top=$("$program" --help 2>/dev/null) || return 0
  local commands
  commands=$(awk '/^commands:$/ { on = 1; next } on && /^$/ { exit } on { print $1 }' <<<"$top")
  if [[ -n $commands && $COMP_CWORD -eq 1 ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$commands --help --version" -- "$cur")
    return 0
  fi
  if [[ $cur == -* ]]; then
    help=$top
    [[ -n $commands ]] && help=$("$program" "${COMP_WORDS[1]}" --help 2>/dev/null)
    mapfile -t COMPREPLY < <(compgen -W "$(grep -oE -- '--[a-z0-9-]+' <<<"$help" | sort -u)" -- "$cur")
    return 0
  fi
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -o filenames -F _ncast_complete ncast-server ncast-peer ncast-swarm ncast-rs ncast-rlnc ncast-bench
