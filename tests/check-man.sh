#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-man.sh SRCDIR [BUILDDIR]
#
# The manuals of man/ against the library they describe:
#   - every page passes `mandoc -Tlint -Wwarning` (no warning, no error) and renders (mandoc
#     -Tascii, and man -l where man(1) works) without a message;
#   - man/man3 holds exactly one page name per symbol of lib/libdmaio.map: a page or a link to
#     one (a symlink, or a one-line ".so man3/PAGE.3"), the link's name among its target's .Nm;
#   - no page names (.Nm, .Fn, .Fo, .Xr) a dmaio_* function that is not exported;
#   - each SYNOPSIS prototype (.Ft/.Fo/.Fa/.Fc) is the header's declaration, and each struct,
#     typedef and #define shown in a page is the header's (same fields, same order);
#   - every errno a function's doxygen lists with @retval is in the ERRORS section of its page;
#   - every .Xr to a page of this project points at a page of man/;
#   - libdmaio(7) names every environment variable lib/ reads (secure_getenv) and refers to
#     every page of man/man3;
#   - each tool page of man/man1 documents exactly the tool's options (the long options and the
#     getopt letters of its source), and every option its --help shows (BUILDDIR given);
#   - man/meson.build installs every page and every link.
# Exit 0 ok, 1 a mismatch, 77 when mandoc is missing.
set -u
strip_awk=$(dirname "$0")/strip-comments.awk
case "${LD_PRELOAD:-}" in *vgpreload*) exec env -u LD_PRELOAD sh "$0" "$@" ;; esac

src=${1:?usage: check-man.sh SRCDIR [BUILDDIR]}
build=${2:-}
man=$src/man
map=$src/lib/libdmaio.map
model_h=$src/include/dmaio-model.h
account_h=$src/include/dmaio-account.h
if [ -n "$build" ] && [ -f "$build/include/dmaio.h" ]; then
	dmaio_h=$build/include/dmaio.h
else
	dmaio_h=$src/include/dmaio.h.in
fi

command -v mandoc >/dev/null 2>&1 || { echo "SKIP: mandoc not found (package mandoc)"; exit 77; }
for t in awk sed sort comm; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not found"; exit 77; }
done
for f in "$map" "$dmaio_h" "$model_h" "$account_h"; do
	[ -f "$f" ] || { echo "FAIL: $f does not exist"; exit 1; }
done
[ -d "$man/man3" ] || { echo "FAIL: no $man/man3"; exit 1; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C
rc=0
fail() { echo "FAIL: $*"; rc=1; }
report() { # title file
	if [ -s "$2" ]; then
		echo "FAIL: $1:"
		sed 's/^/    /' "$2"
		rc=1
	fi
}

# ---- the exported symbols (the global: sections of the version script) ----------------------
# comments may span lines; a node's name (its own, or the one it follows after "}") ends a
# global: list as local: does (the last node of a map may be a global: one)
cat "$map" "$src/lib/model/libdmaio-model.map" "$src/lib/account/libdmaio-account.map" | perl -0777 -pe 's{/\*.*?\*/}{}gs; s/#.*$//mg' |
	tr ';{}' '\n\n\n' | sed 's/[[:space:]]//g' |
	awk '/^local:/ { g = 0; next } /^[A-Z][A-Z_0-9.]*$/ { g = 0; next }
	     /^global:/ { g = 1; sub(/^global:/, "") } g && NF' |
	grep -v '^$' | grep -v '^[A-Z_0-9.]*$' | sort -u >"$tmp/exported"
[ -s "$tmp/exported" ] || { echo "FAIL: no symbol in $map"; exit 1; }

# ---- the headers, without comments: declarations, structs, typedefs, macros ------------------
# one normal form for C text: single spaces, none around * ( ) [ ] , (a comma is followed by one)
norm='{ gsub(/[[:space:]]+/, " "); gsub(/ ?\* ?/, "*"); gsub(/ ?\( ?/, "("); gsub(/ ?\) ?/, ")");
	gsub(/ ?\[ ?/, "["); gsub(/ ?\] ?/, "]"); gsub(/ ?, ?/, ", "); sub(/^ /, ""); sub(/ $/, "") }'
awk -f "$strip_awk" "$dmaio_h" "$model_h" "$account_h" | sed 's://.*$::' >"$tmp/hdr.nocomment"
# macros (continuation lines included), then the text without preprocessor lines
awk '/^[[:space:]]*#[[:space:]]*define[[:space:]]/ { n = $0; sub(/^[[:space:]]*#[[:space:]]*define[[:space:]]+/, "", n);
		sub(/[[:space:](].*/, "", n); print n }' "$tmp/hdr.nocomment" | sort -u >"$tmp/hdr.macros"
awk 'cont { cont = /\\$/; next } /^[[:space:]]*#/ { cont = /\\$/; next } { print }' \
	"$tmp/hdr.nocomment" | tr '\n' ' ' | tr ';' '\n' >"$tmp/hdr.stmts"
# prototypes: "name<TAB>normalized declaration"
awk "$norm"'
	{ s = $0; sub(/.*[{}]/, "", s); $0 = s }
	'"$norm"'
	/^typedef/ { next }
	match($0, /dmaio_[a-z0-9_]+\(/) && $0 !~ /\(\*dmaio_/ {
		name = substr($0, RSTART, RLENGTH - 1); print name "\t" $0 }' "$tmp/hdr.stmts" |
	sort >"$tmp/hdr.protos"
# typedefs of function pointers, normalized
awk '{ s = $0; sub(/.*[{}]/, "", s); $0 = s }'"$norm"' /^typedef .*\(\*/ { print }' \
	"$tmp/hdr.stmts" | sort -u >"$tmp/hdr.typedefs"
# struct bodies: "struct<TAB>field" in order
awk '{ s = s $0 " " } END {
		gsub(/[[:space:]]+/, " ", s) # no tab left: the output is tab-separated
		while (match(s, /struct [a-z0-9_]+ *\{/)) {
			name = substr(s, RSTART + 7, RLENGTH - 7); sub(/ *\{$/, "", name)
			s = substr(s, RSTART + RLENGTH)
			e = index(s, "}"); body = substr(s, 1, e - 1); s = substr(s, e + 1)
			n = split(body, f, ";")
			for (i = 1; i <= n; i++) print name "\t" f[i]
		}
	}' "$tmp/hdr.nocomment" | awk -F '\t' '{ name = $1; $0 = $2 }'"$norm"' NF { print name "\t" $0 }' \
	>"$tmp/hdr.structs"
[ -s "$tmp/hdr.protos" ] || { echo "FAIL: no prototype found in the headers"; exit 1; }

# ---- the pages of man3: names, links, sources -----------------------------------------------
: >"$tmp/names"
: >"$tmp/sources"
: >"$tmp/links-bad"
for f in "$man"/man3/*; do
	[ -e "$f" ] || [ -L "$f" ] || continue
	b=$(basename "$f")
	case $b in
	*.3) ;;
	*) echo "$b: not a section 3 page name" >>"$tmp/links-bad"; continue ;;
	esac
	name=${b%.3}
	if [ -L "$f" ]; then
		t=$(readlink "$f")
		case $t in */*) echo "$b -> $t: a link leaves man3" >>"$tmp/links-bad"; continue ;; esac
		[ -f "$man/man3/$t" ] && [ ! -L "$man/man3/$t" ] ||
			{ echo "$b -> $t: not a page" >>"$tmp/links-bad"; continue; }
		printf '%s\t%s\n' "$name" "$t" >>"$tmp/names"
	elif head -n 1 "$f" | grep -q '^\.so '; then
		t=$(sed -n '1s|^\.so man3/\([^/ ]*\)$|\1|p' "$f")
		if [ "$(wc -l <"$f")" -ne 1 ] || [ -z "$t" ]; then
			echo "$b: a .so link is one line '.so man3/PAGE.3'" >>"$tmp/links-bad"; continue
		fi
		[ -f "$man/man3/$t" ] && [ ! -L "$man/man3/$t" ] &&
			! head -n 1 "$man/man3/$t" | grep -q '^\.so ' ||
			{ echo "$b: .so $t: not a page" >>"$tmp/links-bad"; continue; }
		printf '%s\t%s\n' "$name" "$t" >>"$tmp/names"
	else
		printf '%s\t%s\n' "$name" "$b" >>"$tmp/names"
		echo "$b" >>"$tmp/sources"
	fi
done
report "bad links in man/man3" "$tmp/links-bad"
cut -f1 "$tmp/names" | sort -u >"$tmp/pagenames"
comm -23 "$tmp/exported" "$tmp/pagenames" >"$tmp/nopage"
report "exported symbols without a page (man/man3/SYMBOL.3)" "$tmp/nopage"
comm -13 "$tmp/exported" "$tmp/pagenames" >"$tmp/notexported"
report "pages of man/man3 named after no exported symbol" "$tmp/notexported"

# each page name is among the .Nm of its page, and each .Nm of a page has a page name
: >"$tmp/nm-bad"
while IFS="$(printf '\t')" read -r name page; do
	awk '/^\.Sh / { sh = $2 } sh == "NAME" && /^\.Nm / { print $2 }' "$man/man3/$page" |
		grep -qx "$name" || echo "$name.3 -> $page: $name is not in its NAME (.Nm)" >>"$tmp/nm-bad"
done <"$tmp/names"
for page in $(cat "$tmp/sources"); do
	awk '/^\.Sh / { sh = $2 } sh == "NAME" && /^\.Nm / { print $2 }' "$man/man3/$page" |
		while read -r n; do
			awk -F '\t' -v n="$n" -v p="$page" '$1 == n && $2 == p { found = 1 } END { exit !found }' \
				"$tmp/names" || echo "$page: .Nm $n has no page name $n.3 linking here" >>"$tmp/nm-bad"
		done
done
report "NAME sections and page names disagree" "$tmp/nm-bad"

# ---- every page: lint, rendering, symbol references, cross-references ------------------------
man_ok=false
if command -v man >/dev/null 2>&1; then
	printf '.Dd January 1, 2026\n.Dt T 1\n.Os\n.Sh NAME\n.Nm t\n.Nd t\n' >"$tmp/probe.1"
	out=$(MANPAGER=cat MANWIDTH=80 man -l "$tmp/probe.1" 2>/dev/null) &&
		printf '%s' "$out" | grep -q NAME && man_ok=true
fi
$man_ok || echo "# man(1) does not render here: only mandoc -Tascii checks the rendering"
: >"$tmp/lint"
: >"$tmp/render"
: >"$tmp/refs-bad"
npages=0
bs=$(printf '\b') # mandoc -Tascii overstrikes: X BS X
for f in "$man"/man[0-9]/*; do
	[ -f "$f" ] || continue
	npages=$((npages + 1))
	rel=${f#"$man"/}
	real=$f
	if head -n 1 "$f" | grep -q '^\.so '; then
		real=$man/$(sed -n '1s|^\.so ||p' "$f") # a .so link: its target is the page
	fi
	mandoc -Tlint -Wwarning "$real" >>"$tmp/lint" 2>&1
	out=$(cd "$man" && mandoc -Tascii "$rel" 2>&1) || echo "$rel: mandoc -Tascii failed" >>"$tmp/render"
	printf '%s\n' "$out" | sed "s/.$bs//g" | grep -q '^NAME' ||
		echo "$rel: mandoc -Tascii shows no NAME" >>"$tmp/render"
	if $man_ok; then
		(cd "$man" && MANPAGER=cat MANWIDTH=80 man -l "$rel" >"$tmp/man.out" 2>"$tmp/man.err")
		if [ -s "$tmp/man.err" ]; then
			sed "s|^|$rel: man -l: |" "$tmp/man.err" >>"$tmp/render"
		elif ! grep -q '^NAME' "$tmp/man.out"; then
			echo "$rel: man -l shows no NAME" >>"$tmp/render"
		fi
	fi
	if [ -L "$f" ] || [ "$real" != "$f" ]; then
		continue # a link: its target is checked as a page
	fi
	# dmaio_* functions named by the page, and the pages it refers to
	awk '/^\./ { for (i = 1; i < NF; i++) if ($i ~ /^\.?(Nm|Fn|Fo|Xr)$/ && $(i + 1) ~ /^dmaio_[a-z0-9_]+$/)
		print $(i + 1) }' "$f" | sort -u | comm -23 - "$tmp/exported" |
		sed "s|^|$rel: names |; s|\$| (not exported)|" >>"$tmp/refs-bad"
	awk '/^\./ { for (i = 1; i < NF; i++) if ($i ~ /^\.?Xr$/ && $(i + 1) ~ /^(lib)?dmaio/) {
		s = $(i + 2); sub(/[^0-9].*/, "", s); print $(i + 1) " " s } }' "$f" | sort -u |
		while read -r n s; do
			[ -e "$man/man$s/$n.$s" ] || echo "$rel: .Xr $n $s: no such page in man/" >>"$tmp/refs-bad"
		done
done
[ "$npages" -gt 0 ] || fail "no page in $man"
report "mandoc -Tlint -Wwarning" "$tmp/lint"
report "pages that do not render cleanly" "$tmp/render"
report "references" "$tmp/refs-bad"

# ---- SYNOPSIS prototypes, structs, typedefs and macros against the headers -------------------
: >"$tmp/proto-bad"
: >"$tmp/page.protos"
for page in $(cat "$tmp/sources"); do
	f=$man/man3/$page
	awk -v page="$page" '
		function unq(s) { sub(/^"/, "", s); sub(/"$/, "", s); return s }
		/^\.Sh / { sh = substr($0, 5) }
		sh != "SYNOPSIS" { next }
		/^\.Ft / { ft = unq(substr($0, 5)) }
		/^\.Fo / { fn = $2; args = "" }
		/^\.Fa / { a = unq(substr($0, 5)); args = args (args == "" ? "" : ", ") a }
		/^\.Fc/ { print fn "\t" ft " " fn "(" args ")\t" page }
		/^\.Fn / { print page ": use .Fo/.Fa/.Fc for the prototype of " $2 > "/dev/stderr" }
	' "$f" 2>>"$tmp/proto-bad" | awk -F '\t' '{ page = $3; name = $1; $0 = $2 }'"$norm"' { print name "\t" $0 "\t" page }' \
		>>"$tmp/page.protos"
	# every name of the page has its prototype in the SYNOPSIS
	awk '/^\.Sh / { sh = $2 } sh == "NAME" && /^\.Nm / { print $2 }' "$f" | while read -r n; do
		awk -F '\t' -v n="$n" -v p="$page" '$1 == n && $3 == p { found = 1 } END { exit !found }' \
			"$tmp/page.protos" || echo "$page: no SYNOPSIS prototype (.Fo $n) for $n" >>"$tmp/proto-bad"
	done
done
while IFS="$(printf '\t')" read -r name decl page; do
	hdecl=$(awk -F '\t' -v n="$name" '$1 == n { print $2; exit }' "$tmp/hdr.protos")
	if [ -z "$hdecl" ]; then
		echo "$page: $name is not declared in the headers" >>"$tmp/proto-bad"
	elif [ "$hdecl" != "$decl" ]; then
		printf '%s: %s\n      page:   %s\n      header: %s\n' "$page" "$name" "$decl" "$hdecl" \
			>>"$tmp/proto-bad"
	fi
done <"$tmp/page.protos"
report "SYNOPSIS prototypes that are not the header's" "$tmp/proto-bad"

# every errno a function's doxygen names with @retval is in the ERRORS section of its page
cat >"$tmp/retvals.awk" <<'AWK'
# the errnos of each function's @retval lines: "name<TAB>ERRNO"
/^[[:space:]]*\/\*\*/ { indoc = 1; n = 0; cont = 0 }
indoc {
	line = $0
	sub(/^[[:space:]]*\/?\*+[[:space:]]?/, "", line)
	if (match(line, /@retval[[:space:]]+/)) {
		rest = substr(line, RSTART + RLENGTH); cont = 1
	} else if (cont && line ~ /^[[:space:]]*-E[A-Z0-9]+/) {
		rest = line
	} else {
		cont = 0; rest = ""
	}
	if (cont) {
		k = split(rest, w, /[[:space:]]+/)
		for (i = 1; i <= k; i++) {
			t = w[i]
			if (t == "") continue
			if (t ~ /^-E[A-Z0-9]+,?$/) { gsub(/[-,]/, "", t); e[++n] = t; last = w[i]; continue }
			cont = 0; break
		}
		if (cont && last !~ /,$/) cont = 0
	}
	if ($0 ~ /\*\//) { indoc = 0; pending = 1 }
	next
}
pending && match($0, /dmaio_[a-z0-9_]+\(/) && $0 !~ /^[[:space:]]*#/ && $0 !~ /\(\*dmaio_/ {
	name = substr($0, RSTART, RLENGTH - 1)
	for (i = 1; i <= n; i++) print name "\t" e[i]
	pending = 0; n = 0
}
/;/ { pending = 0 }
AWK
cat >"$tmp/pageerr.awk" <<'AWK'
# errnos of the ERRORS section of a page (every word an .Er covers)
/^\.Sh / { sh = substr($0, 5); next }
sh == "ERRORS" && /^\./ {
	er = 0
	for (i = 1; i <= NF; i++) {
		t = $i
		if (t ~ /^\.?Er$/) { er = 1; continue }
		if (er && t == ",") continue
		if (er && t ~ /^E[A-Z0-9]+$/) { print t; continue }
		er = 0
	}
}
AWK
awk -f "$tmp/retvals.awk" "$dmaio_h" "$model_h" "$account_h" | sort -u >"$tmp/hdr.retvals"
[ -s "$tmp/hdr.retvals" ] || fail "no @retval found in the headers"
: >"$tmp/errno-bad"
while IFS="$(printf '\t')" read -r name page; do
	awk -f "$tmp/pageerr.awk" "$man/man3/$page" | sort -u >"$tmp/page.errnos"
	awk -F '\t' -v n="$name" '$1 == n { print $2 }' "$tmp/hdr.retvals" | sort -u |
		comm -23 - "$tmp/page.errnos" | sed "s|^|$page: ERRORS lacks |; s|\$| (@retval of $name)|" \
		>>"$tmp/errno-bad"
done <"$tmp/names"
report "errnos of the doxygen missing from the pages" "$tmp/errno-bad"

: >"$tmp/shown-bad"
: >"$tmp/all.structs"
for page in $(cat "$tmp/sources"); do
	f=$man/man3/$page
	# the literal blocks: structs (fields in order), typedefs, and .Fd #define names
	awk '/^\.Bd -literal/ { lit = 1; next } /^\.Ed/ { lit = 0; next } lit { print }' "$f" |
		sed -e 's:/\*.*\*/::g' -e 's/\\e/\\/g' >"$tmp/lit"
	awk '
		/^[[:space:]]*struct [a-z0-9_]+ *\{/ { name = $2; sub(/\{.*/, "", name); inside = 1; next }
		inside && /^[[:space:]]*\};/ { inside = 0; next }
		inside { s = $0; gsub(/[[:space:]]+/, " ", s); n = split(s, f, ";")
			for (i = 1; i < n; i++) print name "\t" f[i] }
	' "$tmp/lit" | awk -F '\t' '{ name = $1; $0 = $2 }'"$norm"' NF { print name "\t" $0 }' \
		>"$tmp/page.structs"
	cat "$tmp/page.structs" >>"$tmp/all.structs"
	for s in $(cut -f1 "$tmp/page.structs" | sort -u); do
		awk -F '\t' -v s="$s" '$1 == s { print $2 }' "$tmp/page.structs" >"$tmp/a"
		awk -F '\t' -v s="$s" '$1 == s { print $2 }' "$tmp/hdr.structs" >"$tmp/b"
		if [ ! -s "$tmp/b" ]; then
			echo "$page: struct $s is not defined in the headers" >>"$tmp/shown-bad"
		elif ! cmp -s "$tmp/a" "$tmp/b"; then
			echo "$page: struct $s differs from the header's (- page, + header):" >>"$tmp/shown-bad"
			diff "$tmp/a" "$tmp/b" | grep '^[<>]' | sed 's/^</      -/; s/^>/      +/' >>"$tmp/shown-bad"
		fi
	done
	grep '^[[:space:]]*typedef' "$tmp/lit" | awk "$norm"' { sub(/;$/, ""); print }' |
		while read -r t; do
			grep -qxF "$t" "$tmp/hdr.typedefs" ||
				echo "$page: typedef not in the headers: $t" >>"$tmp/shown-bad"
		done
	sed -n 's/^\.Fd #define \([A-Za-z0-9_]*\).*/\1/p' "$f" | while read -r m; do
		grep -qx "$m" "$tmp/hdr.macros" || echo "$page: #define $m is not in the headers" >>"$tmp/shown-bad"
	done
done
report "structs, typedefs and macros shown that are not the header's" "$tmp/shown-bad"

# ---- man/meson.build installs every page and link ---------------------------------------------
: >"$tmp/install-bad"
if [ ! -f "$man/meson.build" ]; then
	fail "no man/meson.build"
else
	for f in "$man"/man[0-9]/*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		b=$(basename "$f")
		if [ -L "$f" ]; then
			grep -qF "'$b' : '$(readlink "$f")'" "$man/meson.build" ||
				echo "${f#"$man"/}: the link is not in man3_links" >>"$tmp/install-bad"
		else
			grep -qF "'$b'" "$man/meson.build" || grep -qF "'${f#"$man"/}'" "$man/meson.build" ||
				echo "${f#"$man"/}: not installed by man/meson.build" >>"$tmp/install-bad"
		fi
	done
fi
report "man/meson.build" "$tmp/install-bad"

# ---- libdmaio(7): the environment, and a way to every page ----------------------------------
seven=$man/man7/libdmaio.7
if [ ! -f "$seven" ]; then
	fail "no man/man7/libdmaio.7"
else
	: >"$tmp/seven-bad"
	grep -rhoE 'secure_getenv\("[A-Z0-9_]+"\)' "$src/lib" | sed 's/.*("\(.*\)")/\1/' | sort -u |
		while read -r v; do
			grep -q "^\.Ev $v\b" "$seven" || grep -q "^\.It Ev $v\b" "$seven" ||
				echo "libdmaio.7 does not document $v (lib/ reads it with secure_getenv)" >>"$tmp/seven-bad"
		done
	for page in $(cat "$tmp/sources"); do
		grep -q "^\.Xr ${page%.3} 3" "$seven" || echo "libdmaio.7 does not refer to ${page%.3}(3)" >>"$tmp/seven-bad"
	done
	report "libdmaio(7)" "$tmp/seven-bad"
fi

# ---- the tool pages: their options are the tools' ---------------------------------------------
: >"$tmp/tool-bad"
ntools=0
for f in "$man"/man1/*.1; do
	[ -f "$f" ] || continue
	tool=$(basename "$f" .1)
	srcs=""
	for d in examples bench; do
		[ -f "$src/$d/$tool.c" ] && srcs="$src/$d/$tool.c" && [ "$d" = bench ] &&
			srcs="$srcs $(ls "$src"/bench/*.h "$src"/bench/options.c 2>/dev/null | tr '\n' ' ')"
	done
	if [ -z "$srcs" ]; then
		echo "$tool.1: no source examples/$tool.c or bench/$tool.c" >>"$tmp/tool-bad"
		continue
	fi
	ntools=$((ntools + 1))
	# the source: long options of its struct option tables, and the getopt letters
	cat $srcs | grep -oE '\{ *"[a-z0-9-]+", *(no|required|optional)_argument' |
		sed -E 's/\{ *"([a-z0-9-]+)".*/\1/' | sort -u >"$tmp/src.long"
	cat $srcs | grep -oE 'getopt_long\([^,]*, *[^,]*, *"[^"]*"' | sed -E 's/.*"([^"]*)"/\1/' |
		tr -d ':' | fold -w1 | sort -u >"$tmp/src.short"
	# the page: every word after Fl
	awk '/^\./ { for (i = 1; i < NF; i++) if ($i ~ /^\.?Fl$/) print $(i + 1) }' "$f" |
		sed 's/[^A-Za-z0-9-].*//' | sort -u >"$tmp/page.fl"
	sed -n 's/^-\(.*\)/\1/p' "$tmp/page.fl" | sort -u >"$tmp/page.long"
	grep -E '^[A-Za-z0-9]$' "$tmp/page.fl" | sort -u >"$tmp/page.short"
	comm -23 "$tmp/src.long" "$tmp/page.long" | sed "s|^|$tool.1: does not document --|" >>"$tmp/tool-bad"
	comm -13 "$tmp/src.long" "$tmp/page.long" | sed "s|^|$tool.1: documents --|; s|\$| (not an option of $tool)|" >>"$tmp/tool-bad"
	comm -23 "$tmp/src.short" "$tmp/page.short" | sed "s|^|$tool.1: does not document -|" >>"$tmp/tool-bad"
	comm -13 "$tmp/src.short" "$tmp/page.short" | sed "s|^|$tool.1: documents -|; s|\$| (not an option of $tool)|" >>"$tmp/tool-bad"
	# and what its --help shows
	bin=""
	for d in examples bench; do
		[ -n "$build" ] && [ -x "$build/$d/$tool" ] && bin=$build/$d/$tool
	done
	if [ -n "$bin" ]; then
		"$bin" --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sed 's/^--//' | sort -u |
			comm -23 - "$tmp/page.long" | sed "s|^|$tool.1: does not document --|; s|\$| (in $tool --help)|" \
			>>"$tmp/tool-bad"
	fi
done
report "tool pages and the tools' options" "$tmp/tool-bad"

echo "# $(wc -l <"$tmp/exported") exported symbols, $(wc -l <"$tmp/sources") pages in man3" \
	"($(wc -l <"$tmp/names") page names), $npages files in man/, $ntools tool pages;" \
	"$(wc -l <"$tmp/page.protos") prototypes and $(cut -f1 "$tmp/all.structs" | sort -u | wc -l)" \
	"structs ($(wc -l <"$tmp/all.structs") fields) compared with the headers," \
	"$(wc -l <"$tmp/hdr.retvals") @retval errnos found in the pages"
[ $rc = 0 ] && echo "ok: the manuals lint, render and agree with the headers, the map and the tools"
exit $rc
