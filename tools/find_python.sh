#!/bin/sh
# Print the path of the Python interpreter `make` builds .venv with, and say on stderr which one was picked.
#
#   sh tools/find_python.sh            the primary stack: the newest supported Python >= 3.12 (3.13, then 3.12),
#                                      looked for on PATH first, then in pyenv's versions; if there is none, the
#                                      previous stack's Python 3.11 (PATH, pyenv), then python3.
#   sh tools/find_python.sh compat     the previous stack's Python 3.11 (PATH, then pyenv's versions).
#
# PyMC 6, PyTensor 3 and ArviZ 1 need Python >= 3.12; on 3.11 pip resolves PyMC 5, PyTensor 2 and ArviZ 0.x.
# Python 3.14 is not picked: the stack is not tested there yet.
want=${1:-current}
case "$want" in
  current) versions="3.13 3.12" ;;
  compat) versions="3.11" ;;
  *) echo "find_python.sh: unknown stack '$want' (current or compat)" >&2; exit 2 ;;
esac

pyenv_root=${PYENV_ROOT:-}
if [ -z "$pyenv_root" ] && command -v pyenv >/dev/null 2>&1; then pyenv_root=$(pyenv root 2>/dev/null); fi
[ -n "$pyenv_root" ] || pyenv_root="$HOME/.pyenv"

runs() {  # a pyenv shim is on PATH for every installed version but fails unless that version is activated
  "$1" -c 'import sys, venv' >/dev/null 2>&1
}

pick() {  # $1: a version like 3.13; prints the interpreter, PATH first, then the newest pyenv patch release
  p=$(command -v "python$1" 2>/dev/null) && [ -n "$p" ] && runs "$p" && { echo "$p"; return 0; }
  for d in $(ls -d "$pyenv_root"/versions/"$1".* 2>/dev/null | sort -t. -k3,3n -r); do
    [ -x "$d/bin/python$1" ] && runs "$d/bin/python$1" && { echo "$d/bin/python$1"; return 0; }
  done
  return 1
}

for v in $versions; do
  if p=$(pick "$v"); then
    echo "find_python.sh: Python $v for the $want stack: $p" >&2
    echo "$p"
    exit 0
  fi
done
if [ "$want" = current ]; then
  if p=$(pick 3.11) || { p=$(command -v python3) && runs "$p"; }; then
    echo "find_python.sh: no Python 3.12 or 3.13 found (PATH, $pyenv_root/versions); using $p (the previous stack: PyMC 5, ArviZ 0.x)" >&2
    echo "$p"
    exit 0
  fi
fi
echo "find_python.sh: no Python for the $want stack (looked for python$(echo $versions | sed 's/ /, python/g') on PATH and in $pyenv_root/versions)" >&2
exit 1
