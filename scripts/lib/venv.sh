# Sourced by the setup scripts: one way to make a Python environment in the cache.
#   memskill_venv NAME PYTHON PROBE SPEC...
# makes ${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/NAME-venv with PYTHON when
# it is missing, pip-installs SPEC (PyPI) when the import line PROBE fails, checks PROBE again
# (a clear import error and a non-zero exit when it still fails) and sets VENV_PY to the venv's
# python. Output of venv and pip goes to stderr, so that callers can print VENV_PY last.
memskill_venv() {
  local name=$1 py=$2 probe=$3
  shift 3
  local cache="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
  local venv="$cache/$name-venv"
  mkdir -p "$cache"
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv" >&2
  if ! "$venv/bin/python" -c "$probe" 2>/dev/null; then
    "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
    "$venv/bin/python" -m pip install --quiet "$@" >&2
  fi
  "$venv/bin/python" -c "$probe" >&2
  VENV_PY="$venv/bin/python"
}
