#!/bin/sh
# Ordinary command-line programs natively and under `sandpit run` in
# strict and in filter mode, each in a scratch directory of its own that
# is its working directory and its one write grant (also TMPDIR and
# HOME).  A run is the same as the native one when its exit status, its
# standard output and what it left in the directory (names, modes, owners,
# sizes, contents' checksums, extended attributes) are.  Prints a
# Markdown table, one row an invocation, then "N same, N different".
# Not part of `make check`
# (about three minutes); docs/REAL_SUITES.md keeps its table.
#   scripts/real-programs.sh [SANDPIT]   (default build/sandpit)
set -u
SANDPIT=${1:-build/sandpit}
SANDPIT=$(cd "$(dirname "$SANDPIT")" && pwd)/$(basename "$SANDPIT")
WORK=$(mktemp -d /tmp/sandpit-real-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
PY=/usr/bin/python3

# What each invocation starts from: a few files of text, one of binary.
seed() {
	d=$1
	mkdir -p "$d/sub"
	seq 1 20000 | sed 's/$/ some text to compress/' >"$d/a.txt"
	printf 'hello\nworld\nhello again\n' >"$d/b.txt"
	printf 'b\nc\na\nb\n' >"$d/sub/c.txt"
	printf -- '--- b.txt\n+++ b.txt\n@@ -2 +2 @@\n-world\n+there\n' >"$d/p.diff"
	head -c 65536 /usr/bin/ls >"$d/bin.dat"
	printf '{"a": [1, 2, 3], "b": {"c": "d"}}\n' >"$d/in.json"
	chmod 0644 "$d/a.txt" "$d/b.txt" "$d/sub/c.txt" "$d/bin.dat" "$d/in.json"
	# a user attribute and an ACL (user 1000 r--), which cp -a and tar copy
	$PY - "$d/sub/c.txt" <<'EOF2'
import os, struct, sys
os.setxattr(sys.argv[1], 'user.sandpit', b'seed')
acl = struct.pack('<I', 2) + b''.join(struct.pack('<HHI', *e) for e in (
    (1, 6, 2**32 - 1), (2, 4, 1000), (4, 4, 2**32 - 1), (16, 6, 2**32 - 1), (32, 4, 2**32 - 1)))
os.setxattr(sys.argv[1], 'system.posix_acl_access', acl)
EOF2
	tar --mtime=@1000000000 --owner=0 --group=0 --numeric-owner --xattrs --acls \
		--pax-option=delete=atime,delete=ctime -cf "$d/t.tar" -C "$d" sub b.txt
	cat >"$d/aio.py" <<'EOF'
import asyncio
async def main():
    q = asyncio.Queue()
    for i in range(5):
        await q.put(i)
    s = 0
    while not q.empty():
        s += await q.get()
    r = await asyncio.get_running_loop().run_in_executor(None, sum, [1, 2, 3])
    print("asyncio", s, r)
asyncio.run(main())
EOF
	(cd "$d" && git init -q . && git add a.txt b.txt && git -c user.email=x@y -c user.name=x commit -qm one) >/dev/null 2>&1
	# the same times in every run, so that archives of them are the same
	find "$d" -path "$d/.git" -prune -o -exec touch -h -d @1000000000 {} +
	(cd "$d" && zip -q -X z.zip b.txt sub/c.txt) # it keeps those times
}

# the directory as a signature: each entry's type, mode, owner, size,
# checksum and extended attributes (names and values)
signature() {
	$PY - "$1" <<'EOF2'
import hashlib, os, stat, sys
top = sys.argv[1]
for dirpath, dirs, files in os.walk(top):
    dirs[:] = sorted(d for d in dirs if not (dirpath == top and d == '.git'))
    for name in sorted(dirs + files):
        p = os.path.join(dirpath, name)
        st = os.lstat(p)
        xa = ','.join('%s=%s' % (k, os.getxattr(p, k, follow_symlinks=False).hex())
                      for k in sorted(os.listxattr(p, follow_symlinks=False)))
        line = [os.path.relpath(p, top), stat.filemode(st.st_mode), '%d:%d' % (st.st_uid, st.st_gid)]
        if name.endswith('.kbx'):  # a keyring holds its creation time
            pass
        elif stat.S_ISREG(st.st_mode):
            line += [str(st.st_size), hashlib.md5(open(p, 'rb').read()).hexdigest()[:8]]
        elif stat.S_ISLNK(st.st_mode):
            line.append(os.readlink(p))
        print(' '.join(line + [xa]))
EOF2
}

# one run: native, strict or filter; prints "status stdout-sum dir-sum"
run_one() {
	how=$1 d=$2
	shift 2
	rm -rf "$d"
	seed "$d"
	case $how in
	native) (cd "$d" && HOME=$d TMPDIR=$d XDG_CACHE_HOME=$WORK/cache timeout 60 "$@" \
		>"$d.out" 2>"$d.err" </dev/null) ;;
	*) (cd "$d" && HOME=$d TMPDIR=$d XDG_CACHE_HOME=$WORK/cache timeout 60 "$SANDPIT" run --mode="$how" \
		--allow-write="$d" -- "$@" >"$d.out" 2>"$d.err" </dev/null) ;;
	esac
	st=$?
	# the scratch directory's name differs from run to run: out of the output
	sed "s|$d|DIR|g" "$d.out" >"$d.out2"
	echo "$st $(md5sum <"$d.out2" | cut -c1-8) $(signature "$d" | md5sum | cut -c1-8)"
}

same=0
diff=0
row() {
	name=$1
	shift
	n=$(run_one native "$WORK/n" "$@")
	line="| \`$name\` | $(echo "$n" | cut -d' ' -f1)"
	for m in strict filter; do
		s=$(run_one "$m" "$WORK/$m" "$@")
		if [ "$s" = "$n" ]; then
			line="$line | same"
			same=$((same + 1))
		else
			why=""
			[ "${s%% *}" != "${n%% *}" ] && why="status ${s%% *}"
			[ "$(echo "$s" | cut -d' ' -f2)" != "$(echo "$n" | cut -d' ' -f2)" ] && why="$why output"
			[ "$(echo "$s" | cut -d' ' -f3)" != "$(echo "$n" | cut -d' ' -f3)" ] && why="$why files"
			err=$(grep -v '^sandpit: [0-9]* calls refused' "$WORK/$m.err" | head -1 | cut -c1-100 | tr '|' '/')
			line="$line | **differs**:$why${err:+ (\`$err\`)}"
			diff=$((diff + 1))
		fi
	done
	echo "$line |"
}

echo "| invocation | native status | strict | filter |"
echo "|---|---|---|---|"
row "gzip -k a.txt" gzip -k a.txt
row "gunzip (a shell script)" sh -c 'gzip a.txt && gunzip a.txt.gz'
row "xz -k a.txt" xz -k a.txt
row "xz then unxz" sh -c 'xz a.txt; unxz a.txt.xz'
row "bzip2 -k a.txt" bzip2 -k a.txt
row "zstd -q a.txt" zstd -q a.txt
row "lz4 -q a.txt" lz4 -q a.txt a.lz4
row "tar -xf t.tar -C sub" tar -xf t.tar -C sub
row "tar -x --xattrs --acls" tar --xattrs --xattrs-include='*' --acls -xf t.tar -C sub
row "tar -cf" tar -cf new.tar a.txt sub
row "tar -czf (runs gzip)" tar -czf new.tgz a.txt sub
row "zip -q" zip -q -X z.zip a.txt b.txt
row "unzip -d" unzip -q z.zip -d u
row "install -m 0755" install -m 0755 b.txt inst.txt
row "cp -a sub sub2" cp -a sub sub2
row "cp -p" cp -p b.txt b2.txt
row "mv" mv b.txt moved.txt
row "ln -s" ln -s b.txt link
row "mkdir -p x/y/z" mkdir -p x/y/z
row "rm -r sub" rm -r sub
row "touch -d" touch -d '2001-01-01' b.txt
row "chmod 600" chmod 600 b.txt
row "sed -i" sed -i 's/hello/bye/' b.txt
row "sed" sed -n '2p' b.txt
row "awk" awk '{s += $1} END {print s}' a.txt
row "grep -c" grep -c 7 a.txt
row "grep -r" grep -rl hello .
row "sort -u" sort -u sub/c.txt
row "sort -r" sort -r a.txt
row "uniq -c" uniq -c sub/c.txt
row "wc" wc a.txt b.txt
row "cut" cut -c1-4 b.txt
row "rev" rev b.txt
row "od" od -c b.txt
row "xxd" xxd -l 64 bin.dat
row "md5sum" md5sum a.txt bin.dat
row "sha256sum" sha256sum a.txt
row "b2sum" b2sum a.txt
row "base64" base64 bin.dat
row "split" split -l 5000 a.txt part.
row "csplit" csplit -s a.txt 100 200
row "paste" paste b.txt sub/c.txt
row "shuf (seeded)" shuf -n 3 --random-source=a.txt a.txt
row "find -name" find . -name '*.txt'
row "du -a" du -a sub
row "ls -la" ls -la --time-style=+ sub
row "stat" stat -c '%n %s %a' a.txt
row "realpath" realpath sub/c.txt
row "diff" diff b.txt sub/c.txt
row "cmp" cmp a.txt a.txt
row "patch" patch -s b.txt p.diff
row "file" file a.txt bin.dat
row "jq" jq .b.c in.json
row "bc -l" bc -l sub/c.txt
row "sqlite3" sqlite3 db.sqlite 'create table t(x); insert into t values (1),(2); select sum(x) from t;'
row "openssl dgst" openssl dgst -sha256 a.txt
row "openssl enc" openssl enc -aes-256-cbc -pbkdf2 -pass pass:x -in b.txt -out b.enc -S 0011223344556677 -iv 00112233445566778899aabbccddeeff
row "gpg --print-md" gpg --print-md SHA256 a.txt
row "git status" git status --short
row "git log" git log --format=%s
row "git grep" git grep -c hello
row "git grep -P" git grep -P -c 'hel+o'
row "git diff" git diff --stat HEAD~0
row "perl" perl -ne 'print if /again/' b.txt
row "perl \$^X" perl -e 'print "$^X\n"'
row "python3" $PY -c 'import json,hashlib; print(hashlib.md5(open("a.txt","rb").read()).hexdigest())'
row "python3 asyncio" $PY aio.py
row "python3 tempfile" $PY -c 'import tempfile; f=tempfile.NamedTemporaryFile(dir="."); f.write(b"x"); f.flush(); print(len(open(f.name).read()))'
row "python3 subprocess" $PY -c 'import subprocess; print(subprocess.run(["true"]).returncode)'
row "node -e" node -e 'console.log(1 + 1)'
row "node fs" node -e 'require("fs").writeFileSync("n.txt", "node\n"); console.log(require("fs").readFileSync("b.txt", "utf8").length)'
row "busybox sh -c (builtins)" busybox sh -c 'x=$((6*7)); echo $x'
row "busybox sh \$(...)" busybox sh -c 'echo $(echo sub)'
row "sh -c pipe" sh -c 'ls | wc -l'
row "make (a recipe)" sh -c 'printf "all:\n\ttouch made\n" > Makefile && make -s'
row "xargs" sh -c 'printf "a.txt\nb.txt\n" | xargs wc -l'
row "gcc -c" sh -c 'echo "int f(void){return 1;}" > f.c && gcc -c f.c'
row "objdump -d" objdump -d --start-address=0 --stop-address=64 /usr/bin/true
row "readelf -h" readelf -h /usr/bin/true
row "nm -D" nm -D /usr/bin/true
row "strings" strings -n 8 bin.dat
row "iconv" iconv -f utf-8 -t utf-16 b.txt -o u16.txt
row "date -d" date -u -d @0
row "id" id
row "uname -s" uname -s
row "nproc" nproc
row "getent passwd root" getent passwd root
row "env" env -i A=1 env
row "dd" dd if=a.txt of=d.out bs=4096 count=3 status=none
row "truncate" truncate -s 100 b.txt
row "shred -u" shred -u b.txt
row "numfmt" numfmt --to=iec 123456789
row "factor" factor 1234567890123
row "tac" tac b.txt
row "nl" nl b.txt
row "fold" fold -w 5 b.txt
row "fmt" fmt -w 20 a.txt
row "rsync -a" rsync -a sub/ sub3/
row "curl (no network)" curl -sS -q http://127.0.0.1:1/
echo
echo "$same same, $diff different"
