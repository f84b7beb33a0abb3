# Source it: puts the project's Node (the LTS line, or the line given) and npm 12 first on
# PATH in the current shell, fetching them once into a cache (scripts/node.sh).
#
#   . scripts/use-node.sh        # the LTS line of .node-version
#   . scripts/use-node.sh 26     # another supported line

__booking_bin=$(bash "$(dirname "${BASH_SOURCE[0]:-$0}")/node.sh" dir "$@") && {
  PATH="$__booking_bin:$PATH"
  export PATH
  hash -r
  echo "node $(node --version), npm $(npm --version) from $__booking_bin" >&2
}
unset __booking_bin
