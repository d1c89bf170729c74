#!/usr/bin/env bash
# The three stories of layered databases (README, "Layered databases"), as commands that
# run: a base shipped with the app under the user's own database, the base replaced by a
# downloaded one without losing the user's data, and a backup taken while writing.
# Usage: Examples/layers/story.sh [WORKDIR]   (KVREPL=path/to/kvrepl; a temporary folder by default)
set -euo pipefail
KVREPL=${KVREPL:-kvrepl}
SCHEMA="$(cd "$(dirname "$0")" && pwd)/app-schema.json"   # the sample schema plus the user's groups
work=${1:-$(mktemp -d)}
cd "$work"
set -x

# 1. A base that ships with the app: the sample stations, opened read-only under the
#    user's own database. The user's stations are on par with the shipped ones.
"$KVREPL" --demo stations.db -c "count stations"
"$KVREPL" user.db --base stations.db --create --schema "$SCHEMA" \
  -c 'upsert stations {"id": "HOME", "name": "Home", "zone": 1, "lines": [], "location": {"lat": -31.9541, "lon": 115.8621}}' \
  -c 'insert groups {"id": "commute", "stations": ["HOME", "PERTH"]}' \
  -c 'near stations (-31.9540, 115.8620) within 1500 limit 2' \
  -c 'layers'

# 2. Replacing the base: next year's stations arrive as a new database. The swap is atomic;
#    the user's station and groups stay, and every index answers over the new base.
"$KVREPL" stations-2027.db --create --schema "$SCHEMA" \
  -c 'insert stations {"id": "PERTH", "name": "Perth", "zone": 1, "lines": ["Airport"], "location": {"lat": -31.9513, "lon": 115.86}}' \
  -c 'insert stations {"id": "REDCLIFFE", "name": "Redcliffe", "zone": 2, "lines": ["Airport"], "location": {"lat": -31.9380, "lon": 115.9460}}'
"$KVREPL" user.db --base stations.db \
  -c 'replace-base stations-2027.db' \
  -c 'count stations' \
  -c 'doc groups "commute"' \
  -c 'near stations (-31.9540, 115.8620) limit 3' \
  -c 'verify'

# 3. Never replacing in place: a backup is written beside, from one snapshot, and renamed
#    when complete; it opens over the base like the original.
"$KVREPL" user.db --base stations-2027.db \
  -c 'backup user-backup.db' \
  -c 'remove groups "commute"'
"$KVREPL" user-backup.db --base stations-2027.db -c 'doc groups "commute"' -c 'verify'
