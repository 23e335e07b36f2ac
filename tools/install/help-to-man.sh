#!/usr/bin/env bash
# Writes the man page of an ncast program from what the program itself prints for --help and
# --version, so that the page and the help cannot drift apart. Programs made of subcommands (usage:
# PROG <command>) get a COMMANDS section and each command's own --help in it.
#   help-to-man.sh PROGRAM OUTPUT.1
set -euo pipefail
program=$1
output=$2
name=$(basename "$program")

# Turns help text into man(7) requests: "Group:" lines become subsections, Boost.Program_options
# option lines ("  -o [ --output ] arg   text") tagged paragraphs, "  cmd<TAB>text" lines too, the
# rest running text. Each block of options gets its description column from its own lines, since
# an option that fills the column leaves a single space before its text.
to_man() {
  awk -v heading="$1" '
    function esc(s) { gsub(/\\/, "\\e", s); sub(/^[.\047]/, "\\\\\\&&", s); return s }
    function opt(s) { s = esc(s); gsub(/-/, "\\-", s); return "\\fB" s "\\fR" }
    function is_option(s) { return s ~ /^  +-/ }
    function text_column(s,   rest) {  # where the text starts after two or more spaces, or 0
      rest = substr(s, 3)
      if (!match(rest, /[^ ]  +[^ ]/)) return 0
      return 2 + RSTART + RLENGTH - 1
    }
    { line[NR] = $0 }
    END {
      for (i = 1; i <= NR; i++) {
        if (line[i] == "") { if (i > 1 && line[i - 1] != "") print ".PP"; continue }
        if (line[i] ~ /^[^ \t].*:$/) {
          t = line[i]; sub(/:$/, "", t)
          print (heading == "SS" ? ".SS " esc(t) : ".PP\n.B " esc(t))
          continue
        }
        if (line[i] ~ /^  [^ \t]+\t/) {
          t = line[i]; sub(/^  /, "", t); tab = index(t, "\t")
          print ".TP\n" opt(substr(t, 1, tab - 1)) "\n" esc(substr(t, tab + 1)); continue
        }
        if (!is_option(line[i])) { print esc(line[i]); continue }
        # A block of options: its column is the nearest text start of its lines.
        column = 0
        for (j = i; j <= NR && line[j] ~ /^ /; j++)
          if (is_option(line[j]) && (c = text_column(line[j])) && (!column || c < column)) column = c
        for (; i <= NR && line[i] ~ /^ /; i++) {
          s = line[i]
          if (is_option(s)) {
            spec = s; text = ""
            if (column && length(s) >= column && substr(s, column - 1, 1) == " ") {
              spec = substr(s, 1, column - 1); text = substr(s, column)
            }
            sub(/^ +/, "", spec); sub(/ +$/, "", spec)
            print ".TP\n" opt(spec)
            if (text != "") print esc(text)
          } else {
            sub(/^ +/, "", s); print esc(s)
          }
        }
        i--
      }
    }'
}

version=$("$program" --version)
version=${version#"$name "}
help=$("$program" --help)
{
  printf '.TH %s 1 "" "ncast %s" "User Commands"\n' "$(tr a-z A-Z <<<"$name")" "${version%% *}"
  if [[ $help == "usage: $name <command>"* ]]; then
    # usage line, blank, about, blank, "commands:" and its lines, blank, exit status
    synopsis=$(sed -n 1p <<<"$help")
    about=$(awk 'NR > 2 && /^$/ { exit } NR > 2' <<<"$help")
    summary=$(tr '\n' ' ' <<<"$about" | sed 's/\. .*/./; s/ $//')
    printf '.SH NAME\n%s \\- %s\n' "$name" "$summary"
    printf '.SH SYNOPSIS\n%s\n' "$(sed 's/^usage: //; s/   (.*//' <<<"$synopsis")"
    printf '.SH DESCRIPTION\n'
    to_man SS <<<"$about"
    printf '.SH COMMANDS\n'
    awk '/^commands:$/ { on = 1; next } on && /^$/ { exit } on' <<<"$help" | to_man SS
    for command in $(awk '/^commands:$/ { on = 1; next } on && /^$/ { exit } on { print $1 }' <<<"$help"); do
      printf '.SS "%s %s"\n' "$name" "$command"
      "$program" "$command" --help | sed 's/^usage: //' | to_man B
    done
    printf '.SH "EXIT STATUS"\n'
    awk '/^commands:$/ { on = 1; next } on && /^$/ { after = 1; next } after' <<<"$help" |
      sed 's/^exit status: //' | to_man SS
  else
    # "name: what it does" up to a blank line, then "Usage: ...", then the option groups
    about=$(awk '/^$/ { exit } 1' <<<"$help")
    printf '.SH NAME\n%s \\- ' "$name"
    tr '\n' ' ' <<<"${about#"$name: "}" | sed 's/ $//'
    printf '\n.SH SYNOPSIS\n'
    grep -m1 '^Usage: ' <<<"$help" | sed 's/^Usage: //'
    printf '.SH OPTIONS\n'
    awk 'seen && !/^Usage: / { print } /^Usage: / { seen = 1 }' <<<"$help" | to_man SS
  fi
  printf '.SH "SEE ALSO"\n'
  for other in ncast-server ncast-peer ncast-swarm ncast-rs ncast-rlnc ncast-bench; do
    [ "$other" = "$name" ] || printf '.BR %s (1)\n' "$other"
  done
} >"$output.tmp"
mv "$output.tmp" "$output"
