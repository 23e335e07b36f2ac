#!/usr/bin/env bash
# The man page made of a program's --help (tools/install/help-to-man.sh) as man renders it: it names
# the program and its version, and every option its --help lists, the subcommands' options included.
#   man_pages_test.sh PROGRAM PAGE.1.gz
set -euo pipefail
program=$1
page=$2
name=$(basename "$program")
fail() {
  echo "man_pages_test: $name: $*" >&2
  exit 1
}
export ASAN_OPTIONS=detect_leaks=0
rendered=$(MANWIDTH=200 man -l "$page" 2>&1) || fail "man -l failed: $rendered"
# man hyphenates and pads; the options are compared with every space and soft hyphen taken out.
flat=$(tr -d ' \n\302\255' <<<"$rendered")
grep -q "^${name^^}(1)" <<<"$rendered" || fail "the page does not start with ${name^^}(1)"
version=$("$program" --version | cut -d' ' -f2)
grep -q "ncast $version" <<<"$rendered" || fail "the page does not carry version $version"

helps=$("$program" --help)
if [[ $helps == "usage: $name <command>"* ]]; then
  for command in $(awk '/^commands:$/ { on = 1; next } on && /^$/ { exit } on { print $1 }' <<<"$helps"); do
    grep -qx " *$name $command" <<<"$rendered" || fail "the page has no section for $command"
    helps+=$'\n'$("$program" "$command" --help)
  done
fi
options=$(grep -oE '^ +(-[a-z] \[ )?--[a-z0-9-]+' <<<"$helps" | grep -oE -- '--[a-z0-9-]+' | sort -u)
[ -n "$options" ] || fail "found no option in --help"
for option in $options; do
  grep -q -- "$option" <<<"$flat" || fail "the page does not list $option"
done
echo "man_pages_test: $name: $(wc -w <<<"$options") options, all in the page"
