# Sourced by the other scripts (and by you: `. scripts/env.sh`, or `. .venv/bin/activate`): puts the project's
# virtual environment, made by scripts/setup.sh in .venv, first on PATH, unless one is already active.
if [ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ]; then
  . .venv/bin/activate
fi
