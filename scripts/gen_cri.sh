#!/usr/bin/env bash
# Regenerates src/runtime/gen/ from src/runtime/proto/api.proto; with two
# arguments, the generated code of another proto folder (relative to the repo):
#   bash scripts/gen_cri.sh src/csi/proto src/csi/gen
#
# The code generators (buf + protoc-gen-es) are dev-only tools: they are
# installed with npm into a scratch directory outside the repository
# (override with KTS_GEN_TOOLS) and never become runtime dependencies.
# Only @bufbuild/protobuf (pinned in deno.json) is needed at run time; keep
# PROTOC_GEN_ES_VERSION equal to that version.
set -euo pipefail

BUF_VERSION="1.75.0"
PROTOC_GEN_ES_VERSION="2.17.0"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools_dir="${KTS_GEN_TOOLS:-${TMPDIR:-/tmp}/kts-gen-tools}"
proto_dir="${repo_root}/${1:-src/runtime/proto}"
out_dir="${repo_root}/${2:-src/runtime/gen}"

if ! command -v npm >/dev/null 2>&1; then
  echo "gen_cri: npm is required to install buf and protoc-gen-es" >&2
  exit 1
fi

mkdir -p "${tools_dir}"
if [[ ! -x "${tools_dir}/node_modules/.bin/buf" ||
      ! -x "${tools_dir}/node_modules/.bin/protoc-gen-es" ]]; then
  echo "gen_cri: installing buf@${BUF_VERSION} protoc-gen-es@${PROTOC_GEN_ES_VERSION} into ${tools_dir}"
  (cd "${tools_dir}" &&
    { [[ -f package.json ]] || echo '{"private":true}' >package.json; } &&
    npm install --no-audit --no-fund --silent \
      "@bufbuild/buf@${BUF_VERSION}" "@bufbuild/protoc-gen-es@${PROTOC_GEN_ES_VERSION}")
fi

template="$(mktemp --suffix=.buf.gen.yaml)"
trap 'rm -f "${template}"' EXIT
cat >"${template}" <<YAML
version: v2
plugins:
  - local: ${tools_dir}/node_modules/.bin/protoc-gen-es
    out: ${out_dir}
    opt:
      - target=ts
      - import_extension=ts
YAML

rm -rf "${out_dir}"
mkdir -p "${out_dir}"
"${tools_dir}/node_modules/.bin/buf" generate "${proto_dir}" --template "${template}"

# Generated code is not ours to restyle: silence the linter for it (deno fmt
# already skips src/runtime/gen/ via deno.json).
for f in "${out_dir}"/*.ts; do
  { echo "// deno-lint-ignore-file"; cat "${f}"; } >"${f}.tmp" && mv "${f}.tmp" "${f}"
done
echo "gen_cri: wrote $(find "${out_dir}" -name '*.ts' | wc -l) file(s) to ${out_dir#"${repo_root}/"}"
