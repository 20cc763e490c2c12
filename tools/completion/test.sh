#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of the bash completions in this directory: each script is sourced,
# its completion function called with COMP_WORDS/COMP_CWORD as bash sets
# them, and COMPREPLY checked. Prints TAP and a summary line; exits 1 when
# a test failed.
#
# The options and words the tools accept are listed below, by hand, from
# the parsers (tools/src/getopt.rs and each tool's parsing). When the
# sources are next to this directory (../src), the lists are also checked
# against what the parsers name, so that a new option fails this test
# until both the list and the completion know it.
#
#   tools/completion/test.sh            (any directory; bash 4 or later)
#   COMPLETION_DIR=DIR test.sh          test the scripts in DIR instead

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${COMPLETION_DIR:-$here}
src=$here/../src

# --- What the parsers accept (keep in step with the sources) ---------------

# tools/src/smcss.rs, OPTS.
smcss_opts="-a --all -d --debug -l --listening -D --smcd -R --smcr
            -v --version -W --wide -h --help"
# tools/src/smc_pnet.rs, OPTS (-v has no long form).
smc_pnet_opts="-I --interface -D --ibdevice -P --ibport -f --flush
               -a --add -s --show -d --delete -v -V --version -h --help"
# tools/src/smcr/mod.rs, parse_options: the shortest form of each option
# and its long form (`--x` is read as `-x`), and -ad/-da.
smcr_opts="-a --absolute -v --version -d --details -dd --ddetails
           -h --help -ad -da"
smcd_opts=$smcr_opts
# tools/src/smc_run.rs, parse_options (both modes).
smc_run_opts="-d -f -h -r -t -v --help --version --bpf --cgroup"
# tools/src/smc_chk.rs and tools/src/bin/smc_dbg.rs, OPTS.
smc_chk_opts="-C --connect -d --debug -h --help -i --pnetid -l --live-test
              -p --port -s --static-analysis -S --server -v --version
              -6 --ipv6"
smc_dbg_opts="-h --help -t --tgz -v --version"

# tools/src/smcr/common.rs, Flavor::objects.
smcr_objects="device linkgroup info stats ueid dumpdev help"
smcd_objects="device linkgroup info stats ueid seid dumpdev help"
# The words after each object (device.rs, linkgroup.rs, info.rs, stats.rs,
# ueid.rs, seid.rs); smcd has no ibdev/netdev.
declare -A smcr_words=(
    [device]="show all ibdev netdev help"
    [linkgroup]="show link-show all ibdev netdev help"
    [info]="show help"
    [stats]="show reset json help"
    [ueid]="show add del flush help"
)
declare -A smcd_words=(
    [device]="show all help"
    [linkgroup]="show link-show all help"
    [info]="show help"
    [stats]="show reset json help"
    [ueid]="show add del flush help"
    [seid]="show enable disable help"
)

# --- TAP -------------------------------------------------------------------

n=0 passed=0 failed=0 skipped=0

ok() {
    n=$((n + 1)) passed=$((passed + 1))
    echo "ok $n - $1"
}

not_ok() {
    n=$((n + 1)) failed=$((failed + 1))
    echo "not ok $n - $1"
    shift
    local line
    for line in "$@"; do
        echo "# $line"
    done
}

skip() {
    n=$((n + 1)) skipped=$((skipped + 1))
    echo "ok $n - $1 # SKIP $2"
}

# check DESCRIPTION CONDITION-STATUS [DIAGNOSTIC...]
check() {
    local what=$1 status=$2
    shift 2
    if ((status == 0)); then ok "$what"; else not_ok "$what" "$@"; fi
}

# --- Calling a completion ----------------------------------------------------

# complete_words WORD... : completes the last word (which may be empty),
# as bash would with these words; the candidates are in REPLY_WORDS.
REPLY_WORDS=()
complete_words() {
    local spec func
    spec=$(complete -p "$1" 2>/dev/null) || {
        REPLY_WORDS=()
        return 1
    }
    func=${spec#*-F }
    func=${func%% *}
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMP_TYPE=9 COMP_KEY=9
    COMPREPLY=()
    local prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    "$func" "$1" "${COMP_WORDS[COMP_CWORD]}" "$prev" 2>/dev/null
    REPLY_WORDS=("${COMPREPLY[@]}")
}

# complete_line "LINE": the line split at blanks; a trailing blank starts
# an empty word.
complete_line() {
    local line=$1 words
    read -ra words <<<"$line"
    [[ $line == *" " ]] && words+=("")
    complete_words "${words[@]}"
}

# missing WANTED... : the wanted words that are not in REPLY_WORDS.
missing() {
    local w r found out=()
    for w in "$@"; do
        found=
        for r in "${REPLY_WORDS[@]}"; do
            [[ $r == "$w" ]] && found=1 && break
        done
        [[ -n $found ]] || out+=("$w")
    done
    echo "${out[*]}"
}

# offers DESCRIPTION "LINE" WORD... : completing LINE offers every WORD.
offers() {
    local what=$1 line=$2
    shift 2
    complete_line "$line"
    local m
    m=$(missing "$@")
    check "$what" "$([[ -z $m ]] && echo 0 || echo 1)" \
        "line: '$line'" "missing: $m" "got: ${REPLY_WORDS[*]}"
}

# offers_exactly DESCRIPTION "LINE" WORD... : the candidates, sorted, are
# exactly the WORDs.
offers_exactly() {
    local what=$1 line=$2
    shift 2
    complete_line "$line"
    local got want
    got=$(printf '%s\n' "${REPLY_WORDS[@]}" | sed '/^$/d' | sort | tr '\n' ' ')
    want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
    check "$what" "$([[ $got == "$want" ]] && echo 0 || echo 1)" \
        "line: '$line'" "want: $want" "got: $got"
}

# lacks DESCRIPTION "LINE" WORD... : completing LINE offers none of WORD.
lacks() {
    local what=$1 line=$2 w r bad=()
    shift 2
    complete_line "$line"
    for w in "$@"; do
        for r in "${REPLY_WORDS[@]}"; do
            [[ $r == "$w" ]] && bad+=("$w")
        done
    done
    check "$what" "$((${#bad[@]} > 0))" "line: '$line'" "offered: ${bad[*]}"
}

# same_set DESCRIPTION "A" "B": the two word lists hold the same words.
same_set() {
    local a b
    a=$(printf '%s\n' $2 | sort -u | tr '\n' ' ')
    b=$(printf '%s\n' $3 | sort -u | tr '\n' ' ')
    check "$1" "$([[ $a == "$b" ]] && echo 0 || echo 1)" \
        "in the list: $a" "in the source: $b"
}

# --- A fake /sys/class and PATH ------------------------------------------------

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/class/net/eth7" "$tmp/class/net/ens1f0" \
    "$tmp/class/infiniband/rxe3" "$tmp/class/infiniband/mlx5_1" \
    "$tmp/cg/web.slice" "$tmp/cg/db.slice" "$tmp/bin"
printf '#!/bin/sh\n' >"$tmp/bin/smcfaketool"
chmod +x "$tmp/bin/smcfaketool"
export SMC_COMPLETION_SYSFS=$tmp/class
PATH=$tmp/bin:$PATH

# --- The scripts ------------------------------------------------------------

for tool in smcss smcr smcd smc_pnet smc_run smc_chk smc_dbg; do
    file=$dir/$tool
    if [[ ! -f $file ]]; then
        not_ok "$tool: completion script exists" "no $file"
        continue
    fi
    check "$tool: script has an SPDX header" \
        "$(head -n 2 "$file" | grep -q 'SPDX-License-Identifier: GPL-2.0' && echo 0 || echo 1)"
    # shellcheck source=/dev/null
    . "$file"
    check "$tool: completion registered" \
        "$(complete -p "$tool" >/dev/null 2>&1 && echo 0 || echo 1)"
done

# --- Every option ---------------------------------------------------------------

for tool in smcss smcr smcd smc_pnet smc_run smc_chk smc_dbg; do
    var=${tool}_opts
    for opt in ${!var}; do
        offers "$tool offers $opt" "$tool -" "$opt"
    done
done
offers_exactly "smcss --w completes --wide" "smcss --w" --wide
offers_exactly "smc_chk -i completes the interfaces" "smc_chk -i " eth7 ens1f0
offers_exactly "smc_chk -l completes interfaces as operands" "smc_chk -l e" eth7 ens1f0
offers_exactly "smc_chk -C takes a host: nothing offered" "smc_chk -C "
offers_exactly "smc_dbg --t completes --tgz" "smc_dbg --t" --tgz
offers_exactly "smc_run -f completes the families" "smc_run -f " smc inet auto
offers "smcr -ab offers the single-dash long form -absolute" "smcr -ab" -absolute
offers "smcr after -- offers objects, not options" "smcr -- " device
lacks "smcr after -- offers no option" "smcr -- -" -d --details

# --- Cross-check of the lists with the parsers -----------------------------------

# The options a getopt `OPTS` table of FILE declares: -x and --long.
getopt_table() {
    sed -n '/const OPTS: &\[Opt\] = &\[/,/^\];/p' "$1" |
        tr -d ' \n' | sed 's/),/)\n/g; s/},/}\n/g' | while read -r entry; do
        case $entry in
        *Opt::flag*|*Opt::with_arg*)
            short=$(sed -n "s/.*('\\(.\\)',\"\\([a-z0-9-]*\\)\").*/\\1/p" <<<"$entry")
            long=$(sed -n "s/.*('\\(.\\)',\"\\([a-z0-9-]*\\)\").*/\\2/p" <<<"$entry")
            [[ -n $short ]] && echo "-$short"
            [[ -n $long ]] && echo "--$long"
            ;;
        *short:*)
            short=$(sed -n "s/.*short:'\\(.\\)'.*/\\1/p" <<<"$entry")
            long=$(sed -n 's/.*long:Some("\([a-z-]*\)").*/\1/p' <<<"$entry")
            [[ $entry == *short_ok:true* && -n $short ]] && echo "-$short"
            [[ -n $long ]] && echo "--$long"
            ;;
        esac
    done
}

# smcr/smcd: the options parse_options tries, in order, and the shortest
# form that reaches each of them (at least one letter), plus -ad/-da.
smcr_source_opts() {
    local body names=() name len p first other
    body=$(sed -n '/pub fn parse_options/,/^}/p' "$1")
    while read -r name; do names+=("$name"); done < <(
        grep -o 'abbreviates(opt, "-[a-z]*")' <<<"$body" | sed 's/.*"\(.*\)")/\1/')
    grep -o 'starts_with(b"-[a-z]*")' <<<"$body" | sed 's/.*b"\(.*\)")/\1/'
    for name in "${names[@]}"; do
        echo "-$name"
        for ((len = 2; len <= ${#name}; len++)); do
            p=${name:0:len}
            [[ $p == -ad* || $p == -da* ]] && continue
            first=
            for other in "${names[@]}"; do
                [[ $other == "$p"* ]] && first=$other && break
            done
            if [[ $first == "$name" ]]; then
                echo "$p"
                break
            fi
        done
    done
}

# smc_run: the long options and the letters of parse_options' match arms.
smc_run_source_opts() {
    local body
    body=$(sed -n '/pub fn parse_options/,/^}/p' "$1")
    grep -o 'b"--[a-z][a-z-]*"' <<<"$body" | sed 's/b"\(.*\)"/\1/'
    grep -E "^[[:space:]]*\(b'" <<<"$body" | grep -o "b'[a-z]'" |
        sed "s/b'\\(.\\)'/-\\1/"
}

# The words an object's parser compares with, outside its tests.
object_source_words() {
    sed '/#\[cfg(test)\]/,$d' "$1" |
        grep -o 'abbreviates([^,()]*, "[a-z-]*")\|abbr("[a-z-]*")' |
        sed 's/.*"\([a-z-]*\)")/\1/'
}

if [[ -f $src/smcss.rs && -f $src/smc_pnet.rs && -f $src/smcr/mod.rs &&
    -f $src/smc_run.rs && -f $src/smcr/common.rs && -f $src/smc_chk.rs &&
    -f $src/bin/smc_dbg.rs ]]; then
    same_set "smc_chk: option list matches tools/src/smc_chk.rs" \
        "$smc_chk_opts" "$(getopt_table "$src/smc_chk.rs")"
    same_set "smc_dbg: option list matches tools/src/bin/smc_dbg.rs" \
        "$smc_dbg_opts" "$(getopt_table "$src/bin/smc_dbg.rs")"
    same_set "smcss: option list matches tools/src/smcss.rs" \
        "$smcss_opts" "$(getopt_table "$src/smcss.rs")"
    same_set "smc_pnet: option list matches tools/src/smc_pnet.rs" \
        "$smc_pnet_opts" "$(getopt_table "$src/smc_pnet.rs")"
    same_set "smcr: option list matches tools/src/smcr/mod.rs" \
        "$smcr_opts" "$(smcr_source_opts "$src/smcr/mod.rs")"
    same_set "smc_run: option list matches tools/src/smc_run.rs" \
        "$smc_run_opts" "$(smc_run_source_opts "$src/smc_run.rs")"
    same_set "smcd: objects match tools/src/smcr/common.rs" \
        "$smcd_objects" "$(sed -n '/pub fn name(self)/,/^    }/p' "$src/smcr/common.rs" |
            grep -o 'Object::[A-Za-z]* => "[a-z-]*"' | sed 's/.*"\(.*\)"/\1/')"
    same_set "smcr: objects are smcd's without seid" \
        "$smcr_objects seid" "$smcd_objects"
    for object in device linkgroup info stats ueid; do
        same_set "smcr $object: words match tools/src/smcr/$object.rs" \
            "${smcr_words[$object]}" "$(object_source_words "$src/smcr/$object.rs")"
    done
    same_set "smcd seid: words match tools/src/smcr/seid.rs" \
        "${smcd_words[seid]}" "$(object_source_words "$src/smcr/seid.rs")"
else
    for what in "smcss options" "smc_pnet options" "smcr options" \
        "smc_run options" "smc_chk options" "smc_dbg options" "objects" "objects per flavour" \
        device linkgroup info stats ueid seid; do
        skip "$what match the parser" "no sources at $src"
    done
fi

# --- smcr and smcd: objects and their words ---------------------------------------

offers_exactly "smcr completes its objects" "smcr " $smcr_objects
offers_exactly "smcd completes its objects" "smcd " $smcd_objects
offers_exactly "smcr -d completes the objects after options" "smcr -d " $smcr_objects
for object in "${!smcr_words[@]}"; do
    offers_exactly "smcr $object completes its words" "smcr $object " ${smcr_words[$object]}
done
for object in "${!smcd_words[@]}"; do
    offers_exactly "smcd $object completes its words" "smcd $object " ${smcd_words[$object]}
done
offers_exactly "smcr d is device, by prefix" "smcr d " ${smcr_words[device]}
offers_exactly "smcr l l is linkgroup link-show" "smcr l l " all ibdev netdev
offers_exactly "smcr -dd stats completes stats' words" "smcr -dd stats " ${smcr_words[stats]}
offers_exactly "smcr se is no object (seid is SMC-D only)" "smcr se "
offers_exactly "smcd se is seid" "smcd se " ${smcd_words[seid]}
offers_exactly "smcr dumpdev takes nothing" "smcr dumpdev "
offers_exactly "smcr ueid add: the UEID is free text" "smcr ueid add "
offers_exactly "smcr stats show takes nothing more" "smcr stats show "
offers_exactly "smcr device ibdev: RDMA devices" "smcr device ibdev " rxe3 mlx5_1
offers_exactly "smcr device show netdev: interfaces" "smcr device show netdev " eth7 ens1f0
offers_exactly "smcr device i r: RDMA devices by prefix" "smcr device i r" rxe3
offers_exactly "smcr linkgroup link-show netdev: interfaces" \
    "smcr linkgroup link-show netdev " eth7 ens1f0
offers_exactly "smcr linkgroup show all: the filters" "smcr linkgroup show all " ibdev netdev
offers_exactly "smcr device netdev eth7: nothing more" "smcr device netdev eth7 "
offers_exactly "smcd device show: all" "smcd device show " all
offers_exactly "smcr linkgroup after an LG-ID: nothing" "smcr linkgroup 974fb300 "

# --- smc_pnet: option arguments ------------------------------------------------------

offers_exactly "smc_pnet -I: interfaces" "smc_pnet -a NET1 -I " eth7 ens1f0
offers_exactly "smc_pnet --interface: interfaces" "smc_pnet --interface e" eth7 ens1f0
offers_exactly "smc_pnet --int (a prefix): interfaces" "smc_pnet --int " eth7 ens1f0
offers_exactly "smc_pnet -D: RDMA devices" "smc_pnet -a NET1 -D " rxe3 mlx5_1
offers_exactly "smc_pnet -aD (a cluster): RDMA devices" "smc_pnet -aD " rxe3 mlx5_1
offers_exactly "smc_pnet --ibdevice: RDMA devices" "smc_pnet --ibdevice m" mlx5_1
complete_words smc_pnet --ibdevice = ""
m=$(missing rxe3 mlx5_1)
check "smc_pnet --ibdevice=: RDMA devices (split at =)" "$([[ -z $m ]] && echo 0 || echo 1)" \
    "got: ${REPLY_WORDS[*]}"
complete_words smc_pnet --ibdevice = r
check "smc_pnet --ibdevice=r: rxe3 (split at =)" \
    "$([[ ${REPLY_WORDS[*]} == rxe3 ]] && echo 0 || echo 1)" "got: ${REPLY_WORDS[*]}"
complete_words smc_pnet --interface=e
m=$(missing --interface=eth7 --interface=ens1f0)
check "smc_pnet --interface=e: interfaces (one word)" "$([[ -z $m ]] && echo 0 || echo 1)" \
    "got: ${REPLY_WORDS[*]}"
offers_exactly "smc_pnet -P: the ports" "smc_pnet -a NET1 -D rxe3 -P " 1 2
offers_exactly "smc_pnet --ibp: the ports" "smc_pnet --ibp " 1 2
offers_exactly "smc_pnet -Ieth7: the argument is in the word" "smc_pnet -Ieth7 "
offers_exactly "smc_pnet --i is ambiguous: nothing" "smc_pnet --i "
lacks "smc_pnet: the PNETID is free text" "smc_pnet -s " -s --show eth7

# --- smc_run ---------------------------------------------------------------------

offers_exactly "smc_run -r: a size, no candidates" "smc_run -r "
offers_exactly "smc_run -dt: a size, no candidates" "smc_run -dt "
lacks "smc_run --bpf: no -r/-t" "smc_run --bpf -" -r -t
lacks "smc_run -r 64k: no --bpf/--cgroup" "smc_run -r 64k -" --bpf --cgroup
offers "smc_run: the command" "smc_run -d smcfake" smcfaketool
offers "smc_run -r64k: the command" "smc_run -r64k smcfake" smcfaketool
offers "smc_run -- : the command" "smc_run -- smcfake" smcfaketool
lacks "smc_run: after the command, not smc_run's options" "smc_run smcfaketool -" \
    --bpf --cgroup -r
offers "smc_run --cgroup: directories" "smc_run --bpf --cgroup $tmp/cg/" \
    "$tmp/cg/web.slice" "$tmp/cg/db.slice"
complete_words smc_run --bpf --cgroup = "$tmp/cg/w"
check "smc_run --cgroup=: directories (split at =)" \
    "$([[ ${REPLY_WORDS[*]} == "$tmp/cg/web.slice" ]] && echo 0 || echo 1)" \
    "got: ${REPLY_WORDS[*]}"
complete_words smc_run --bpf "--cgroup=$tmp/cg/d"
check "smc_run --cgroup=DIR: directories (one word)" \
    "$([[ ${REPLY_WORDS[*]} == "--cgroup=$tmp/cg/db.slice" ]] && echo 0 || echo 1)" \
    "got: ${REPLY_WORDS[*]}"

# --- Summary ---------------------------------------------------------------------

echo "1..$n"
echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))
