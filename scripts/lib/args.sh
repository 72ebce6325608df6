# Sourced by the scripts in scripts/: their -h/--help and their refusal of unknown arguments.
#   wk_args MAX_POSITIONAL "ALLOWED_FLAGS" "$@"
# -h or --help prints the script's header comment (its usage) and exits 0 before the script does
# anything; an option not in ALLOWED_FLAGS, or more than MAX_POSITIONAL other arguments ("*": any
# number), stops it with exit status 2 and a one-line message.

wk_help() {
  # The comment block after the shebang, without its leading "# ".
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
}

wk_args() {
  local max="$1" flags=" $2 " name n=0 a
  shift 2
  name="$(basename "$0")"
  for a in "$@"; do
    case "$a" in
      -h | --help) wk_help; exit 0 ;;
      -*)
        if [[ "$flags" != *" $a "* ]]; then
          echo "$name: unknown option '$a' (see $name --help)" >&2
          exit 2
        fi
        ;;
      *) n=$((n + 1)) ;;
    esac
  done
  if [ "$max" != "*" ] && [ "$n" -gt "$max" ]; then
    echo "$name: takes at most $max argument(s), got $n (see $name --help)" >&2
    exit 2
  fi
}
