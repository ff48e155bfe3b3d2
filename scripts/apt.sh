# Sourced by scripts/setup.sh and scripts/sanitize.sh: apt_install PACKAGE... (through sudo when not root).
apt_install() {
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  "${sudo[@]}" apt-get update -q && "${sudo[@]}" apt-get install -y -q "$@"
}
