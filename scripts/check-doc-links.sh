#!/bin/sh
# Checks the relative links of README.md, docs/*.md, bench/README.md and
# test/{drivers,mtr}/README.md: each must name an existing file, and a
# #fragment must match a heading of its target (GitHub's anchor rule).
# Usage: scripts/check-doc-links.sh [REPO_DIR]; prints the broken links
# and exits 1 if there are any.
cd "${1:-$(dirname "$0")/..}" || exit 2
out=$(
  for f in README.md docs/*.md bench/README.md test/drivers/README.md test/mtr/README.md; do
    dir=$(dirname "$f")
    grep -o '\](\([^)]*\))' "$f" | sed 's/^](\(.*\))$/\1/' | while read -r link; do
      case "$link" in http*|mailto:*) continue ;; esac
      path=${link%%#*}
      frag=""
      case "$link" in *#*) frag=${link#*#} ;; esac
      if [ -z "$path" ]; then target=$f; else target=$dir/$path; fi
      if [ ! -e "$target" ]; then
        echo "$f: missing $link"
        continue
      fi
      if [ -n "$frag" ]; then
        # GitHub's anchors: lower case, punctuation dropped, spaces to '-'.
        grep '^#' "$target" | sed 's/^#* *//' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g' |
          grep -qx -- "$frag" || echo "$f: no heading for $link"
      fi
    done
  done
)
[ -z "$out" ] && exit 0
echo "$out"
exit 1
