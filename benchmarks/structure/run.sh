#!/usr/bin/env bash
# The structure-aware step measured on the shared corpora (docs/structure.md, "Figures").
#   bash benchmarks/structure/run.sh [OPTIONS] [FILE.jsonl...]
# Builds benchmarks/Compression.StructureAnalysis (Release) and runs it on the given corpora (default: the seven of
# ../shared/data), JSON and BSON input. OPTIONS go to the harness: --split random|first, --seed N, --fraction F,
# --level L, --dictionary-size BYTES, --input json|bson|both, --seconds S (speed budget per pass pair; 0 = no speed),
# --json OUT.json. The table goes to stdout; progress to stderr. Exit 1 when any document did not come back identical.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
options=() files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --split|--seed|--fraction|--level|--dictionary-size|--input|--seconds|--json) options+=("$1" "$2"); shift 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
if [ ${#files[@]} -eq 0 ]; then
  data=${STRUCTURE_DATA:-../shared/data}
  [ -d "$data" ] || data=/work/shared/data
  files=("$data"/{movies,earthquakes,countries,flights,caniuse,emoji,large}.jsonl)
fi
dotnet build benchmarks/Compression.StructureAnalysis -c Release -v q -nologo >&2
dotnet benchmarks/Compression.StructureAnalysis/bin/Release/net10.0/Compression.StructureAnalysis.dll "${options[@]}" "${files[@]}"
