;; A Teddy-style SIMD keyword prefilter with exact confirmation (built by test/keyword-filter.test.ts
;; with wabt into keyword-filter.wasm beside it; loaded by src/keyword-filter.ts). Invariant: `scan`
;; reports exactly the lines of [start, end) that contain a keyword of the trie at `trie`, as
;; findKeywordLines in src/keyword-automaton.ts does: the SIMD pass only proposes positions where a
;; keyword may start (never missing one), and each proposal is confirmed by a walk of the trie.
;;
;; Memory layout, chosen by the caller:
;;   tables: 2 groups x 4 positions x (16 low-nibble + 16 high-nibble) bytes = 256 bytes. Bit b of
;;     table[g][k].lo[n] & table[g][k].hi[h] says that byte (h << 4 | n) may stand at offset k of a
;;     keyword of bucket b in group g (offsets past a keyword's end allow every byte).
;;   trie: the automaton's trie edges as i32 entries, the row of state s at trie + s * 1024; the entry
;;     for byte c holds next * 1024, plus 1 when `next` ends a keyword, or 0 for no edge (none on "\n").
;;   [start, end): the bytes, end - 1 being "\n", followed by at least 32 readable bytes.
;;   out: (line start address, line index from 0) pairs, room for (end - start) / 2 + 1 of them.
(module
	(memory (export "memory") 1)

	;; Lines counted by the last call of `scan`.
	(global $lines (export "lines") (mut i32) (i32.const 0))

	;; Does a keyword start at `at`? Walks the trie from its root until no edge leads on.
	(func $confirm (param $trie i32) (param $at i32) (result i32)
		(local $entry i32)
		(loop $next
			(local.set $entry
				(i32.load (i32.add (i32.add (local.get $trie) (local.get $entry)) (i32.shl (i32.load8_u (local.get $at)) (i32.const 2)))))
			(if (i32.eqz (local.get $entry)) (then (return (i32.const 0))))
			(if (i32.and (local.get $entry) (i32.const 1)) (then (return (i32.const 1))))
			(local.set $at (i32.add (local.get $at) (i32.const 1)))
			(br $next))
		(unreachable))

	;; Finds the lines of [start, end) holding a keyword; returns how many pairs it wrote at `out` and
	;; leaves the number of lines in $lines.
	(func (export "scan") (param $tables i32) (param $trie i32) (param $start i32) (param $end i32)
		(param $out i32) (result i32)
		(local $p i32)
		(local $v v128)
		(local $newlines i32)
		(local $candidates i32)
		(local $lane i32)
		(local $before i32)
		(local $line i32)
		(local $lineStart i32)
		(local $candidateLine i32)
		(local $done i32)
		(local $written i32)
		(local $nibble v128)
		(local $lo0 v128) (local $hi0 v128) (local $lo1 v128) (local $hi1 v128)
		(local $lo2 v128) (local $hi2 v128) (local $lo3 v128) (local $hi3 v128)
		(local.set $p (local.get $start))
		(local.set $lineStart (local.get $start))
		(local.set $done (i32.const -1))
		(local.set $nibble (i8x16.splat (i32.const 15)))
		(block $finished
			(loop $block
				(br_if $finished (i32.ge_u (local.get $p) (local.get $end)))
				(local.set $v (v128.load (local.get $p)))
				(local.set $newlines (i8x16.bitmask (i8x16.eq (local.get $v) (i8x16.splat (i32.const 10)))))
				;; Low and high nibbles of the bytes at p + k, for keyword offsets k = 0..3.
				(local.set $lo0 (v128.and (local.get $v) (local.get $nibble)))
				(local.set $hi0 (v128.and (i16x8.shr_u (local.get $v) (i32.const 4)) (local.get $nibble)))
				(local.set $v (v128.load offset=1 (local.get $p)))
				(local.set $lo1 (v128.and (local.get $v) (local.get $nibble)))
				(local.set $hi1 (v128.and (i16x8.shr_u (local.get $v) (i32.const 4)) (local.get $nibble)))
				(local.set $v (v128.load offset=2 (local.get $p)))
				(local.set $lo2 (v128.and (local.get $v) (local.get $nibble)))
				(local.set $hi2 (v128.and (i16x8.shr_u (local.get $v) (i32.const 4)) (local.get $nibble)))
				(local.set $v (v128.load offset=3 (local.get $p)))
				(local.set $lo3 (v128.and (local.get $v) (local.get $nibble)))
				(local.set $hi3 (v128.and (i16x8.shr_u (local.get $v) (i32.const 4)) (local.get $nibble)))
				;; Bucket bits: a lane is nonzero where a keyword of some bucket may start (16 buckets in 2 groups).
				(local.set $v
					(v128.or
						(v128.and
							(v128.and
								(v128.and (i8x16.swizzle (v128.load offset=0 (local.get $tables)) (local.get $lo0)) (i8x16.swizzle (v128.load offset=16 (local.get $tables)) (local.get $hi0)))
								(v128.and (i8x16.swizzle (v128.load offset=32 (local.get $tables)) (local.get $lo1)) (i8x16.swizzle (v128.load offset=48 (local.get $tables)) (local.get $hi1))))
							(v128.and
								(v128.and (i8x16.swizzle (v128.load offset=64 (local.get $tables)) (local.get $lo2)) (i8x16.swizzle (v128.load offset=80 (local.get $tables)) (local.get $hi2)))
								(v128.and (i8x16.swizzle (v128.load offset=96 (local.get $tables)) (local.get $lo3)) (i8x16.swizzle (v128.load offset=112 (local.get $tables)) (local.get $hi3)))))
						(v128.and
							(v128.and
								(v128.and (i8x16.swizzle (v128.load offset=128 (local.get $tables)) (local.get $lo0)) (i8x16.swizzle (v128.load offset=144 (local.get $tables)) (local.get $hi0)))
								(v128.and (i8x16.swizzle (v128.load offset=160 (local.get $tables)) (local.get $lo1)) (i8x16.swizzle (v128.load offset=176 (local.get $tables)) (local.get $hi1))))
							(v128.and
								(v128.and (i8x16.swizzle (v128.load offset=192 (local.get $tables)) (local.get $lo2)) (i8x16.swizzle (v128.load offset=208 (local.get $tables)) (local.get $hi2)))
								(v128.and (i8x16.swizzle (v128.load offset=224 (local.get $tables)) (local.get $lo3)) (i8x16.swizzle (v128.load offset=240 (local.get $tables)) (local.get $hi3)))))))
				(local.set $candidates (i32.const 0))
				(if (v128.any_true (local.get $v))
					(then (local.set $candidates (i32.xor (i8x16.bitmask (i8x16.eq (local.get $v) (v128.const i64x2 0 0))) (i32.const 0xffff)))))
				;; The last block: lanes at or past `end` are not the caller's.
				(if (i32.gt_u (i32.add (local.get $p) (i32.const 16)) (local.get $end))
					(then
						(local.set $before (i32.sub (i32.shl (i32.const 1) (i32.sub (local.get $end) (local.get $p))) (i32.const 1)))
						(local.set $newlines (i32.and (local.get $newlines) (local.get $before)))
						(local.set $candidates (i32.and (local.get $candidates) (local.get $before)))))
				;; Each proposed position, unless its line was already reported, is confirmed.
				(block $confirmed
					(loop $candidate
						(br_if $confirmed (i32.eqz (local.get $candidates)))
						(local.set $lane (i32.ctz (local.get $candidates)))
						(local.set $candidates (i32.and (local.get $candidates) (i32.sub (local.get $candidates) (i32.const 1))))
						(local.set $before (i32.and (local.get $newlines) (i32.sub (i32.shl (i32.const 1) (local.get $lane)) (i32.const 1))))
						(local.set $candidateLine (i32.add (local.get $line) (i32.popcnt (local.get $before))))
						(br_if $candidate (i32.eq (local.get $candidateLine) (local.get $done)))
						(br_if $candidate
							(i32.eqz (call $confirm (local.get $trie) (i32.add (local.get $p) (local.get $lane)))))
						(local.set $done (local.get $candidateLine))
						(i32.store offset=0 (local.get $out)
							(select
								(i32.sub (i32.add (local.get $p) (i32.const 32)) (i32.clz (local.get $before)))
								(local.get $lineStart)
								(local.get $before)))
						(i32.store offset=4 (local.get $out) (local.get $candidateLine))
						(local.set $out (i32.add (local.get $out) (i32.const 8)))
						(local.set $written (i32.add (local.get $written) (i32.const 1)))
						(br $candidate)))
				(local.set $line (i32.add (local.get $line) (i32.popcnt (local.get $newlines))))
				(local.set $lineStart
					(select
						(i32.sub (i32.add (local.get $p) (i32.const 32)) (i32.clz (local.get $newlines)))
						(local.get $lineStart)
						(local.get $newlines)))
				(local.set $p (i32.add (local.get $p) (i32.const 16)))
				(br $block)))
		(global.set $lines (local.get $line))
		(local.get $written))
)
