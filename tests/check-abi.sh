#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-abi.sh SRCDIR LIB...               compare each built library with its stored ABI
# check-abi.sh --write VERSION SRCDIR LIB...  store the ABI of a release (tests/abi/README.md)
#
# LIB is a built libdmaio.so.* or libdmaio-model.so.*. Its stored ABI is the newest
# SRCDIR/tests/abi/<libdmaio|libdmaio-model>-X.Y.abi (1.0: libdmaio-1.0.abi), written by abidw
# with only the public headers' types (dmaio.h, dmaio-model.h). The library fails when
#   - abidiff, with SRCDIR/tests/abi/extensible.suppr (members appended to an extensible struct,
#     nothing else), reports an ABI change or an incompatible one (exit bits 4 and 8): a member
#     moved, retyped or removed, a parameter or return type changed, a symbol removed, ...
#     (functions added in a node newer than the released ones are not counted as changes: they
#     are checked below instead),
#   - a symbol of the stored ABI is not exported with the version it was released in
#     (DMAIO_1.0, resp. DMAIO_MODEL_1.0),
#   - a released node of the version script (lib/libdmaio.map, lib/model/libdmaio-model.map)
#     does not list exactly the stored symbols of that node (a symbol added to a released node),
#   - an exported symbol not in the stored ABI does not sit in a node of the map newer than the
#     released ones (DMAIO_1.1, DMAIO_MODEL_1.1, ...).
# Exit 0 ok, 1 a change (abidiff's report printed), 77 (skip) without abidw/abidiff/nm, for a
# static library, or when the stored ABI is of another architecture.
set -u
strip_awk=$(dirname "$0")/strip-comments.awk
LC_ALL=C
export LC_ALL
# under the valgrind test setup: run the script itself natively
case "${LD_PRELOAD:-}" in *vgpreload*) exec env -u LD_PRELOAD sh "$0" "$@" ;; esac

usage='usage: check-abi.sh [--write VERSION] SRCDIR LIB...'
write=
if [ "${1:-}" = --write ]; then
	write=${2:?$usage}
	case $write in
	[0-9]*.[0-9]*) ;;
	*) echo "$usage (VERSION: the release, e.g. 1.0)"; exit 2 ;;
	esac
	shift 2
fi
src=${1:?$usage}
shift
[ $# -ge 1 ] || { echo "$usage"; exit 2; }

for t in abidw abidiff nm awk sed sort comm; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not found (abigail-tools, binutils)"; exit 77; }
done
suppr=$src/tests/abi/extensible.suppr
[ -f "$suppr" ] || { echo "FAIL: $suppr does not exist"; exit 1; }
[ -f "$src/include/dmaio-model.h" ] || { echo "FAIL: $src/include/dmaio-model.h does not exist"; exit 1; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
rc=0

# The abidw of one library, public types only: --headers-dir marks every type not declared in
# the public headers private, --drop-private-types drops them, --drop-undefined-syms and
# --exported-interfaces-only drop the internal (hidden) functions and variables and what only
# they reach. Locations, paths, DT_NEEDED (libdrm is optional) are left out; the translation
# unit paths are made relative to the source tree, so that the file does not depend on where
# the tree and the build are.
# abi_dump LIB OUT
abi_dump() {
	_hd=$tmp/headers
	rm -rf "$_hd" && mkdir "$_hd" || exit 1
	# the generated dmaio.h of the build (BUILD/include/ for BUILD/lib/LIB), else dmaio.h.in:
	# libabigail matches the headers by file name, and the two differ in the version macros only
	_gen=$(dirname "$1")/../include/dmaio.h
	if [ -f "$_gen" ]; then
		cp "$_gen" "$_hd/dmaio.h" || exit 1
	else
		cp "$src/include/dmaio.h.in" "$_hd/dmaio.h" || exit 1
	fi
	cp "$src/include/dmaio-model.h" "$_hd/" || exit 1
	if ! abidw --headers-dir "$_hd" --drop-private-types --drop-undefined-syms \
		--exported-interfaces-only --no-corpus-path --no-comp-dir-path --no-show-locs \
		--no-elf-needed --type-id-style hash --out-file "$2.raw" "$1" >"$tmp/abidw.err" 2>&1; then
		echo "FAIL: abidw $1:"
		sed 's/^/    /' "$tmp/abidw.err"
		exit 1
	fi
	sed "s|^\( *<abi-instr .* path='\)[^']*/\(lib/[^']*'\)|\1\2|" "$2.raw" >"$2" || exit 1
}

# elf symbols of an abixml file, as name@version (one per line, sorted)
abi_syms() {
	sed -n "s/^ *<elf-symbol name='\([^']*\)' version='\([^']*\)'.*/\1@\2/p" "$1" | sort -u
}

# The layout of the extensible structs (the names of extensible.suppr) in an abixml file, one
# line per member, "struct<TAB>index<TAB>bit offset<TAB>name<TAB>type<TAB>short type", and
# "struct<TAB>size<TAB>bits": each type spelled out by name, typedefs expanded (short: not) (not by the type-ids, which another libabigail may
# number otherwise); the first definition of each struct.
# struct_layout ABIXML
struct_layout() {
	sed -n 's/^ *name *= *\([A-Za-z_][A-Za-z0-9_]*\) *$/\1/p' "$suppr" >"$tmp/extensible"
	awk -v list="$tmp/extensible" '
		function attr(k,   m) {
			if (match($0, " " k "=\047[^\047]*\047")) {
				m = substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 4)
				return m
			}
			return ""
		}
		# a type by name, qualifiers after what they qualify ("char const* const*"); with
		# full, typedefs with what they stand for ("uint32_t{__uint32_t{unsigned int}}")
		function tname(id, full, depth,   k, s, i) {
			if (depth > 20) return "..."
			k = kind[id]
			if (k == "") return "?" id
			if (k == "named") return nm[id]
			if (k == "typedef")
				return full ? nm[id] "{" tname(tgt[id], full, depth + 1) "}" : nm[id]
			if (k == "ptr") return tname(tgt[id], full, depth + 1) "*"
			if (k == "qual") return tname(tgt[id], full, depth + 1) qual[id]
			if (k == "array") return tname(tgt[id], full, depth + 1) "[" len[id] "]"
			if (k == "fn") {
				s = tname(tgt[id], full, depth + 1) "("
				for (i = 1; i <= np[id]; i++)
					s = s (i > 1 ? "," : "") tname(par[id, i], full, depth + 1)
				return s ")"
			}
			return "?" id
		}
		BEGIN { while ((getline l < list) > 0) want[l] = 1 }
		/<(type-decl|enum-decl|union-decl|class-decl) / {
			id = attr("id")
			if (id != "" && !(id in kind)) {
				kind[id] = "named"; nm[id] = attr("name")
				if ($0 ~ /<class-decl/) nm[id] = "struct " nm[id]
				if ($0 ~ /<union-decl/) nm[id] = "union " nm[id]
				if ($0 ~ /<enum-decl/) nm[id] = "enum " nm[id]
			}
		}
		/<typedef-decl / { kind[attr("id")] = "typedef"; nm[attr("id")] = attr("name"); tgt[attr("id")] = attr("type-id") }
		/<pointer-type-def / { kind[attr("id")] = "ptr"; tgt[attr("id")] = attr("type-id") }
		/<qualified-type-def / {
			id = attr("id"); kind[id] = "qual"; tgt[id] = attr("type-id")
			qual[id] = (attr("const") == "yes" ? " const" : "") (attr("volatile") == "yes" ? " volatile" : "")
		}
		/<array-type-def / { arr = attr("id"); kind[arr] = "array"; tgt[arr] = attr("type-id"); len[arr] = "" }
		/<subrange / && arr != "" { len[arr] = len[arr] (len[arr] == "" ? "" : "][") attr("length") }
		/<\/array-type-def>/ { arr = "" }
		/<function-type / { fn = attr("id"); kind[fn] = "fn"; np[fn] = 0 }
		/<parameter / && fn != "" { np[fn]++; par[fn, np[fn]] = attr("type-id") }
		/<return / && fn != "" { tgt[fn] = attr("type-id") }
		/<\/function-type>/ { fn = "" }
		/<class-decl / && attr("is-declaration-only") != "yes" && (attr("name") in want) &&
			!(attr("name") in seen) {
			cur = attr("name"); seen[cur] = 1; n = 0
			out[++nout] = cur "\tsize\t" attr("size-in-bits")
			next
		}
		cur != "" && /<data-member / { off = attr("layout-offset-in-bits") }
		cur != "" && /<var-decl / {
			mem[++nout] = cur "\t" ++n "\t" off "\t" attr("name") "\t"
			mtype[nout] = attr("type-id")
		}
		cur != "" && /<\/class-decl>/ { cur = "" }
		END {
			for (i = 1; i <= nout; i++)
				print (i in mem) ? mem[i] tname(mtype[i], 1, 0) "\t" tname(mtype[i], 0, 0) : out[i]
		}' "$1"
}

# node symbol: the global symbols of each node of a version script
map_nodes() {
	awk -f "$strip_awk" "$1" | sed -e 's/#.*$//' -e 's/[{};]/ & /g' | tr ' \t' '\n\n' | awk '
		$0 == "" { next }
		depth == 0 && $0 == "{" { depth = 1; g = 1; next }
		depth == 0 && $0 == ";" { name = ""; next }
		depth == 0 { name = $0; next }
		$0 == "}" { depth = 0; name = ""; next }
		$0 == "global:" { g = 1; next }
		$0 == "local:" { g = 0; next }
		$0 == ";" { next }
		g { print name, $0 }'
}

# the architecture an abixml file describes
arch_of() { sed -n "s/^<abi-corpus .*architecture='\([^']*\)'.*/\1/p" "$1"; }

# X.Y of a node name PREFIX_X.Y, as a number that sorts (X * 1000 + Y); -1 when not of PREFIX
node_rank() { # PREFIX NODE
	case $2 in
	"$1"[0-9]*.[0-9]*)
		_v=${2#"$1"}
		_maj=${_v%%.*}
		_min=${_v#*.}
		case $_maj$_min in *[!0-9]*) echo -1; return ;; esac
		echo $((_maj * 1000 + _min)) ;;
	*) echo -1 ;;
	esac
}

for lib in "$@"; do
	case $(basename "$lib") in
	libdmaio-model.so*) name=libdmaio-model map=$src/lib/model/libdmaio-model.map prefix=DMAIO_MODEL_ ;;
	libdmaio.so*) name=libdmaio map=$src/lib/libdmaio.map prefix=DMAIO_ ;;
	*.so | *.so.*) echo "FAIL: $lib: not libdmaio or libdmaio-model"; exit 1 ;;
	*) echo "SKIP: $lib is not a shared library (default_library=static?)"; exit 77 ;;
	esac
	[ -f "$lib" ] || { echo "FAIL: $lib does not exist"; exit 1; }
	[ -f "$map" ] || { echo "FAIL: $map does not exist"; exit 1; }

	if [ -n "$write" ]; then
		out=$src/tests/abi/$name-$write.abi
		abi_dump "$lib" "$tmp/new.abi"
		cp "$tmp/new.abi" "$out" || exit 1
		echo "wrote $out: $(abi_syms "$out" | wc -l) symbols," \
			"nodes $(abi_syms "$out" | sed 's/.*@//' | sort -u | tr '\n' ' ')"
		continue
	fi

	# the newest stored release
	stored=$(ls "$src/tests/abi/$name"-[0-9]*.abi 2>/dev/null | sort -V | tail -n 1)
	if [ -z "$stored" ]; then
		echo "FAIL: no stored ABI $src/tests/abi/$name-1.0.abi; after a release, store it with"
		echo "    sh tests/check-abi.sh --write 1.0 . $lib"
		rc=1
		continue
	fi
	echo "# $name: $(basename "$lib") against $(basename "$stored")"
	abi_dump "$lib" "$tmp/new.abi"

	if [ "$(arch_of "$stored")" != "$(arch_of "$tmp/new.abi")" ]; then
		echo "SKIP: $(basename "$stored") describes $(arch_of "$stored"), $lib is" \
			"$(arch_of "$tmp/new.abi")"
		exit 77
	fi

	abi_syms "$stored" >"$tmp/stored"
	sed 's/.*@//' "$tmp/stored" | sort -u >"$tmp/released"
	[ -s "$tmp/stored" ] || { echo "FAIL: $stored lists no symbol"; rc=1; continue; }
	newest=0
	while read -r node; do
		r=$(node_rank "$prefix" "$node")
		if [ "$r" -lt 0 ]; then
			echo "FAIL: $(basename "$stored") has a symbol in node $node (not ${prefix}X.Y)"
			rc=1
		elif [ "$r" -gt "$newest" ]; then
			newest=$r
		fi
	done <"$tmp/released"

	# -- exported symbols (name@version; nm prints @@ for the default version)
	nm -D --defined-only "$lib" >"$tmp/nm" || { echo "FAIL: nm -D $lib"; exit 1; }
	awk '$2 != "A" { print $3 }' "$tmp/nm" | sed 's/@@*/@/' | sort -u >"$tmp/exported"
	map_nodes "$map" >"$tmp/map"
	awk '{ print $1 }' "$tmp/map" | sort -u >"$tmp/mapnodes"

	# -- abidiff. Functions and variables added in a node newer than the released ones are
	#    left to the checks below (a suppression made here, naming those nodes)
	: >"$tmp/added.suppr"
	newer=
	while read -r node; do
		r=$(node_rank "$prefix" "$node")
		[ "$r" -gt "$newest" ] && newer="$newer${newer:+|}$(printf '%s' "$node" | sed 's/\./\\./g')"
	done <"$tmp/mapnodes"
	if [ -n "$newer" ]; then
		for kind in function variable; do
			printf '\n[suppress_%s]\n  label = added in a node newer than the released ones\n  change_kind = added-%s\n  symbol_version_regexp = ^(%s)$\n' \
				"$kind" "$kind" "$newer" >>"$tmp/added.suppr"
		done
	fi
	added=
	[ -s "$tmp/added.suppr" ] && added="--suppressions $tmp/added.suppr"
	# shellcheck disable=SC2086
	abidiff --suppressions "$suppr" $added "$stored" "$tmp/new.abi" >"$tmp/report" 2>&1
	st=$?
	if [ $((st & 3)) -ne 0 ]; then
		echo "FAIL: abidiff could not compare (exit $st):"
		sed 's/^/    /' "$tmp/report"
		rc=1
	elif [ $((st & 12)) -ne 0 ]; then
		what="an ABI change"
		[ $((st & 8)) -ne 0 ] && what="an INCOMPATIBLE ABI change"
		echo "FAIL: $name: abidiff reports $what against $(basename "$stored") (exit $st):"
		sed 's/^/    /' "$tmp/report"
		rc=1
	else
		echo "ok: abidiff with extensible.suppr reports no change"
	fi

	# -- the extensible structs: the members of the release unchanged (same order, offset, name
	#    and type), anything new after them, the size never smaller. libabigail 2.2's
	#    has_data_member_inserted_at = end also lets through members moved inside the struct
	#    (offsets changed, size kept): this is what makes extensible.suppr mean "appended only".
	struct_layout "$stored" >"$tmp/layout.old"
	struct_layout "$tmp/new.abi" >"$tmp/layout.new"
	nstructs=0
	layout_rc=0
	for s in $(cut -f1 "$tmp/layout.old" | sort -u); do
		nstructs=$((nstructs + 1))
		awk -F '\t' -v s="$s" '$1 == s' "$tmp/layout.old" >"$tmp/s.old"
		awk -F '\t' -v s="$s" '$1 == s' "$tmp/layout.new" >"$tmp/s.new"
		if [ ! -s "$tmp/s.new" ]; then
			echo "FAIL: struct $s: no longer in the ABI of $(basename "$lib")"
			rc=1
			continue
		fi
		awk -F '\t' -v s="$s" '
			NR == FNR { if ($2 == "size") osize = $3; else { old[$2] = $3 "\t" $4 "\t" $5; os[$2] = $6 }; next }
			$2 == "size" { nsize = $3; next }
			{ new[$2] = $3 "\t" $4 "\t" $5; ns[$2] = $6 }
			END {
				bad = 0
				for (i = 1; i in old; i++) {
					if (old[i] == new[i]) continue
					split(old[i], o, "\t"); split(new[i], w, "\t")
					if (os[i] != ns[i] || o[3] == w[3]) { o[3] = os[i]; w[3] = ns[i] }
					printf "FAIL: struct %s: member %d was \"%s %s\" at bit %s, is now %s\n",
						s, i, o[3], o[2], o[1],
						(i in new) ? "\"" w[3] " " w[2] "\" at bit " w[1] : "gone"
					bad = 1
				}
				if (nsize + 0 < osize + 0) {
					printf "FAIL: struct %s: %d bits, smaller than the release (%d)\n", s, nsize, osize
					bad = 1
				}
				if (bad)
					printf "    (only members appended at the end of an extensible struct are allowed)\n"
				exit bad
			}' "$tmp/s.old" "$tmp/s.new" || layout_rc=1
	done
	if [ "$nstructs" = 0 ]; then
		echo "FAIL: no extensible struct of extensible.suppr in $(basename "$stored")"
		rc=1
	elif [ "$layout_rc" = 0 ]; then
		echo "ok: the $nstructs extensible structs keep the members of the release"
	else
		rc=1
		# what abidiff says without extensible.suppr
		# shellcheck disable=SC2086
		abidiff $added "$stored" "$tmp/new.abi" >"$tmp/report" 2>&1
		echo "    abidiff without extensible.suppr (exit $?):"
		sed 's/^/    /' "$tmp/report"
	fi

	# -- every released symbol exported with the version it was released in
	comm -23 "$tmp/stored" "$tmp/exported" >"$tmp/lost"
	if [ -s "$tmp/lost" ]; then
		echo "FAIL: released symbols not exported with their release's version:"
		while read -r s; do
			n=${s%@*}
			now=$(grep "^$n@" "$tmp/exported" | tr '\n' ' ')
			echo "    $s (exported now: ${now:-nothing})"
		done <"$tmp/lost"
		rc=1
	fi

	# -- a released node lists exactly its stored symbols
	while read -r node; do
		sed -n "s/@$node\$//p" "$tmp/stored" | sort -u >"$tmp/want"
		awk -v n="$node" '$1 == n { print $2 }' "$tmp/map" | sort -u >"$tmp/have"
		if ! grep -qx "$node" "$tmp/mapnodes"; then
			echo "FAIL: released node $node is missing from $(basename "$map")"
			rc=1
			continue
		fi
		comm -13 "$tmp/want" "$tmp/have" >"$tmp/added"
		comm -23 "$tmp/want" "$tmp/have" >"$tmp/removed"
		if [ -s "$tmp/added" ]; then
			echo "FAIL: symbols added to the released node $node of $(basename "$map")" \
				"(a new symbol goes in a new node, ${prefix}X.Y):"
			sed 's/^/    /' "$tmp/added"
			rc=1
		fi
		if [ -s "$tmp/removed" ]; then
			echo "FAIL: symbols removed from the released node $node of $(basename "$map"):"
			sed 's/^/    /' "$tmp/removed"
			rc=1
		fi
	done <"$tmp/released"

	# -- every symbol not released sits in a newer node
	comm -13 "$tmp/stored" "$tmp/exported" >"$tmp/new"
	nnew=0
	while read -r s; do
		n=${s%@*}
		v=${s#*@}
		r=$(node_rank "$prefix" "$v")
		if [ "$s" = "$n" ]; then
			echo "FAIL: $n is exported without a version node"
			rc=1
		elif [ "$r" -le "$newest" ]; then
			echo "FAIL: $n is exported in $v, not in a node newer than the released ones" \
				"(${prefix}X.Y above $(tr '\n' ' ' <"$tmp/released" | sed 's/ $//'))"
			rc=1
		elif ! grep -qx "$v $n" "$tmp/map"; then
			echo "FAIL: $n is exported in $v, which $(basename "$map") does not give it"
			rc=1
		else
			nnew=$((nnew + 1))
		fi
	done <"$tmp/new"

	echo "# $name: $(wc -l <"$tmp/stored") released symbols ($(tr '\n' ' ' <"$tmp/released" |
		sed 's/ $//')), $(wc -l <"$tmp/exported") exported, $nnew in newer nodes"
done
[ -z "$write" ] && [ $rc = 0 ] && echo "ok: the ABI of every release is kept"
exit $rc
