#!/usr/bin/env bash
# Writes a man page from a program's own --help (CLI11) and a hand-written roff part, so the
# options in the manual are the ones the binary parses.
# Usage: scripts/gen_man.sh BINARY NAME SECTION VERSION HAND_WRITTEN.roff OUTPUT
#   The page: NAME (the first line of --help), SYNOPSIS (its Usage line), OPTIONS (the rest of
#   --help), COMMANDS (each subcommand's --help, for a program that has them), then
#   HAND_WRITTEN (DESCRIPTION, FILES, EXIT STATUS, SEE ALSO...).
set -euo pipefail
if [[ $# -ne 6 ]]; then
  echo "usage: $0 BINARY NAME SECTION VERSION HAND_WRITTEN OUTPUT" >&2
  exit 2
fi
bin=$1 name=$2 section=$3 version=$4 part=$5 out=$6

# Verbatim text for roff: backslashes escaped, a leading '.' or "'" made literal.
verbatim() {
  sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

# --help with the binary's path replaced by its name.
help_of() {
  "$bin" "$@" --help | sed -e "s|^Usage: [^ ]*|Usage: $name|"
}

main_help=$(help_of)
summary=$(head -n 1 <<<"$main_help" | sed -e "s/^$name: //")
upper=$(tr '[:lower:]' '[:upper:]' <<<"$name")

{
  echo ".TH $upper $section \"\" \"peerbloom $version\" \"peerbloom manual\""
  echo ".SH NAME"
  echo "$name \\- $summary"
  echo ".SH SYNOPSIS"
  grep -m 1 '^Usage: ' <<<"$main_help" | sed -e 's/^Usage: //' | verbatim
  echo ".SH OPTIONS"
  echo ".nf"
  sed -e '1,/^Usage: /d' -e '/^Subcommands:/,$d' <<<"$main_help" | sed -e '/./,$!d' | verbatim
  echo ".fi"
  commands=$(sed -n -e '/^Subcommands:/,$p' <<<"$main_help" | awk 'NR > 1 && NF { print $1 }')
  if [[ -n $commands ]]; then
    echo ".SH COMMANDS"
    for c in $commands; do
      echo ".SS $c"
      echo ".nf"
      help_of "$c" | verbatim
      echo ".fi"
    done
  fi
  cat "$part"
} >"$out.tmp"
mv "$out.tmp" "$out"
