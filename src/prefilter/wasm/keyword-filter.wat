;; A Teddy-style SIMD keyword prefilter with exact confirmation (built by test/helpers/wasm.ts with
;; wabt into keyword-filter.wasm beside it, and into keyword-filter-relaxed.wasm with each swizzle
;; relaxed; src/prefilter/keyword-filter.ts loads the one the runtime validates). Invariant: `scan`
;; reports exactly the lines of [start, end) that contain a keyword of the trie at `trie`, as
;; findKeywordLines in src/prefilter/keyword-automaton.ts does: the SIMD pass only proposes positions where a
;; keyword may start (never missing one), and each proposal is confirmed by a walk of the trie; the
;; rest of a reported line is not searched.
;; `shapes` gives each line's shape hash bit for bit as hashShape in src/signals/shape.ts does.
;;
;; Memory layout, chosen by the caller:
;;   tables: 2 groups x 4 positions x (16 low-nibble + 16 high-nibble) bytes = 256 bytes. Bit b of
;;     table[g][k].lo[n] & table[g][k].hi[h] says that byte (h << 4 | n) may stand at offset k of a
;;     keyword of bucket b in group g (offsets past a keyword's end allow every byte). `scan` looks up
;;     only the low nibble at offset 3 (two lookups fewer per block, for a few more proposals).
;;   trie: the automaton's trie edges as i32 entries, the row of state s at trie + s * 1024; the entry
;;     for byte c holds next * 1024, plus 1 when `next` ends a keyword, or 0 for no edge (none on "\n").
;;   [start, end): the bytes, end - 1 being "\n", preceded by at least 16 bytes and followed by at
;;     least 32 bytes it may read (what they hold does not matter; nothing outside `out` is written).
;;   out: (line start address, line index from 0) pairs, room for (end - start) / 2 + 1 of them.
(module
	(memory (export "memory") 1)

	;; Lines counted by the last call of `scan`.
	(global $lines (export "lines") (mut i32) (i32.const 0))

	;; The sum of the 16 unsigned bytes.
	(func $sum (param $counts v128) (result i32)
		(local $wide v128)
		(local.set $wide (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $counts))))
		(i32.add
			(i32.add (i32x4.extract_lane 0 (local.get $wide)) (i32x4.extract_lane 1 (local.get $wide)))
			(i32.add (i32x4.extract_lane 2 (local.get $wide)) (i32x4.extract_lane 3 (local.get $wide)))))

	;; `lines` less the newlines in [end, stop): the last 16-byte block of a pass ends at `stop` and may
	;; run past `end` over bytes that are not the caller's (they are read, never written: the input
	;; may be a window of a larger buffer that is being written to a file meanwhile).
	(func $uncount (param $lines i32) (param $end i32) (param $stop i32) (result i32)
		(block $done
			(loop $byte
				(br_if $done (i32.ge_u (local.get $end) (local.get $stop)))
				(local.set $lines (i32.sub (local.get $lines) (i32.eq (i32.load8_u (local.get $end)) (i32.const 10))))
				(local.set $end (i32.add (local.get $end) (i32.const 1)))
				(br $byte)))
		(local.get $lines))

	;; Finds the lines of [start, end) holding a keyword; returns how many pairs it wrote at `out` and
	;; leaves the number of lines in $lines. Newlines are counted per lane (a lane counts at most 255
	;; blocks before it is summed); a line's index, start and end are worked out only when a keyword
	;; in it is confirmed (its start and end 16 bytes at a time), positions before the end of the last
	;; reported line are not confirmed, and the next block starts at its "\n". The trie walk and the
	;; sum are inline: a call here would spill every vector.
	(func (export "scan") (param $tables i32) (param $trie i32) (param $start i32) (param $end i32)
		(param $out i32) (result i32)
		(local $p i32)
		(local $stop i32)
		(local $line i32)
		(local $reportedTo i32)
		(local $candidates i32)
		(local $at i32)
		(local $lineStart i32)
		(local $lineEnd i32)
		(local $written i32)
		(local $probe i32)
		(local $entry i32)
		(local $mask i32)
		(local $bytes v128)
		(local $wide v128)
		(local $counts v128)
		(local $newline v128)
		(local $nibble v128)
		(local $v v128)
		(local $g0low0 v128)
		(local $g0high0 v128)
		(local $g0low1 v128)
		(local $g0high1 v128)
		(local $g0low2 v128)
		(local $g0high2 v128)
		(local $g0low3 v128)
				(local $g1low0 v128)
		(local $g1high0 v128)
		(local $g1low1 v128)
		(local $g1high1 v128)
		(local $g1low2 v128)
		(local $g1high2 v128)
		(local $g1low3 v128)
				(local $lo0 v128) (local $hi0 v128) (local $lo1 v128) (local $hi1 v128)
		(local $lo2 v128) (local $hi2 v128) (local $lo3 v128)
		(local.set $p (local.get $start))
		(local.set $reportedTo (local.get $start))
		(local.set $newline (i8x16.splat (i32.const 10)))
		(local.set $nibble (i8x16.splat (i32.const 15)))
		;; The tables stay in locals (V8 would otherwise load them all at the top of each block and spill).
		(local.set $g0low0 (v128.load offset=0 (local.get $tables)))
		(local.set $g0high0 (v128.load offset=16 (local.get $tables)))
		(local.set $g0low1 (v128.load offset=32 (local.get $tables)))
		(local.set $g0high1 (v128.load offset=48 (local.get $tables)))
		(local.set $g0low2 (v128.load offset=64 (local.get $tables)))
		(local.set $g0high2 (v128.load offset=80 (local.get $tables)))
		(local.set $g0low3 (v128.load offset=96 (local.get $tables)))
		(local.set $g1low0 (v128.load offset=128 (local.get $tables)))
		(local.set $g1high0 (v128.load offset=144 (local.get $tables)))
		(local.set $g1low1 (v128.load offset=160 (local.get $tables)))
		(local.set $g1high1 (v128.load offset=176 (local.get $tables)))
		(local.set $g1low2 (v128.load offset=192 (local.get $tables)))
		(local.set $g1high2 (v128.load offset=208 (local.get $tables)))
		(local.set $g1low3 (v128.load offset=224 (local.get $tables)))
		(block $finished
			(loop $blocks
				(br_if $finished (i32.ge_u (local.get $p) (local.get $end)))
				(local.set $stop (select (local.get $end) (i32.add (local.get $p) (i32.const 4080))
					(i32.lt_u (i32.sub (local.get $end) (local.get $p)) (i32.const 4080))))
				(local.set $counts (v128.const i64x2 0 0))
				(loop $block
					(local.set $bytes (v128.load (local.get $p)))
					;; Low and high nibbles of the bytes at p + k, for keyword offsets k = 0..3.
					(local.set $lo0 (v128.and (local.get $bytes) (local.get $nibble)))
					(local.set $hi0 (v128.and (i16x8.shr_u (local.get $bytes) (i32.const 4)) (local.get $nibble)))
					(local.set $v (v128.load offset=1 (local.get $p)))
					(local.set $lo1 (v128.and (local.get $v) (local.get $nibble)))
					(local.set $hi1 (v128.and (i16x8.shr_u (local.get $v) (i32.const 4)) (local.get $nibble)))
					(local.set $v (v128.load offset=2 (local.get $p)))
					(local.set $lo2 (v128.and (local.get $v) (local.get $nibble)))
					(local.set $hi2 (v128.and (i16x8.shr_u (local.get $v) (i32.const 4)) (local.get $nibble)))
					(local.set $v (v128.load offset=3 (local.get $p)))
					(local.set $lo3 (v128.and (local.get $v) (local.get $nibble)))
					;; Bucket bits: a lane is nonzero where a keyword of some bucket may start (16 buckets in 2 groups).
					(local.set $v
						(v128.or
							(v128.and
								(v128.and
									(v128.and (i8x16.swizzle (local.get $g0low0) (local.get $lo0)) (i8x16.swizzle (local.get $g0high0) (local.get $hi0)))
									(v128.and (i8x16.swizzle (local.get $g0low1) (local.get $lo1)) (i8x16.swizzle (local.get $g0high1) (local.get $hi1))))
								(v128.and
									(v128.and (i8x16.swizzle (local.get $g0low2) (local.get $lo2)) (i8x16.swizzle (local.get $g0high2) (local.get $hi2)))
									(i8x16.swizzle (local.get $g0low3) (local.get $lo3))))
							(v128.and
								(v128.and
									(v128.and (i8x16.swizzle (local.get $g1low0) (local.get $lo0)) (i8x16.swizzle (local.get $g1high0) (local.get $hi0)))
									(v128.and (i8x16.swizzle (local.get $g1low1) (local.get $lo1)) (i8x16.swizzle (local.get $g1high1) (local.get $hi1))))
								(v128.and
									(v128.and (i8x16.swizzle (local.get $g1low2) (local.get $lo2)) (i8x16.swizzle (local.get $g1high2) (local.get $hi2)))
									(i8x16.swizzle (local.get $g1low3) (local.get $lo3))))))
					(if (v128.any_true (local.get $v))
						(then
							(local.set $candidates (i32.xor (i8x16.bitmask (i8x16.eq (local.get $v) (v128.const i64x2 0 0))) (i32.const 0xffff)))
							(loop $candidate
								(local.set $at (i32.add (local.get $p) (i32.ctz (local.get $candidates))))
								(local.set $candidates (i32.and (local.get $candidates) (i32.sub (local.get $candidates) (i32.const 1))))
								(if (i32.and (i32.ge_u (local.get $at) (local.get $reportedTo)) (i32.lt_u (local.get $at) (local.get $end)))
									(then
										;; Does a keyword start at `at`? The trie walked from its root until no edge leads on.
										(local.set $probe (local.get $at))
										(local.set $entry (i32.const 0))
										(block $walked
											(loop $walk
												(local.set $entry (i32.load (i32.add (i32.add (local.get $trie) (local.get $entry))
													(i32.shl (i32.load8_u (local.get $probe)) (i32.const 2)))))
												(br_if $walked (i32.and (local.get $entry) (i32.const 1)))
												(local.set $probe (i32.add (local.get $probe) (i32.const 1)))
												(br_if $walk (local.get $entry))))
										(if (i32.and (local.get $entry) (i32.const 1)) (then
										;; A keyword: the line's start (the last "\n" before `at`, 16 bytes at a time, lanes
										;; before `start` left out), end (the first "\n" from `at`) and index.
										(local.set $lineStart (local.get $at))
										(block $found
											(loop $back
												(if (i32.le_u (local.get $lineStart) (local.get $start)) (then
													(local.set $lineStart (local.get $start))
													(br $found)))
												(local.set $lineStart (i32.sub (local.get $lineStart) (i32.const 16)))
												(local.set $mask (i8x16.bitmask (i8x16.eq (v128.load (local.get $lineStart)) (local.get $newline))))
												(if (i32.lt_u (local.get $lineStart) (local.get $start)) (then
													(local.set $mask (i32.and (local.get $mask)
														(i32.shl (i32.const -1) (i32.sub (local.get $start) (local.get $lineStart)))))))
												(if (local.get $mask) (then
													(local.set $lineStart (i32.sub (i32.add (local.get $lineStart) (i32.const 32)) (i32.clz (local.get $mask))))
													(br $found)))
												(br $back)))
										(local.set $lineEnd (local.get $at))
										(block $ended
											(loop $forward
												(local.set $mask (i8x16.bitmask (i8x16.eq (v128.load (local.get $lineEnd)) (local.get $newline))))
												(if (local.get $mask) (then
													(local.set $lineEnd (i32.add (local.get $lineEnd) (i32.ctz (local.get $mask))))
													(br $ended)))
												(local.set $lineEnd (i32.add (local.get $lineEnd) (i32.const 16)))
												(br $forward)))
										(local.set $reportedTo (i32.add (local.get $lineEnd) (i32.const 1)))
										;; Its index: newlines summed so far, in this run of blocks, and in this block before it.
										(local.set $wide (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $counts))))
										(i32.store offset=0 (local.get $out) (local.get $lineStart))
										(i32.store offset=4 (local.get $out)
											(i32.add
												(i32.add (local.get $line)
													(i32.add
														(i32.add (i32x4.extract_lane 0 (local.get $wide)) (i32x4.extract_lane 1 (local.get $wide)))
														(i32.add (i32x4.extract_lane 2 (local.get $wide)) (i32x4.extract_lane 3 (local.get $wide)))))
												(i32.popcnt
													(i32.and
														(i8x16.bitmask (i8x16.eq (local.get $bytes) (local.get $newline)))
														(i32.sub (i32.shl (i32.const 1) (i32.sub (local.get $at) (local.get $p))) (i32.const 1))))))
										(local.set $out (i32.add (local.get $out) (i32.const 8)))
										(local.set $written (i32.add (local.get $written) (i32.const 1)))))))
								(br_if $candidate (local.get $candidates)))
							;; The rest of a reported line has no newline and nothing to report: the next block
							;; starts at its "\n".
							(if (i32.gt_u (local.get $reportedTo) (i32.add (local.get $p) (i32.const 17))) (then
								(local.set $p (i32.sub (local.get $reportedTo) (i32.const 17)))))))
					(local.set $counts (i8x16.sub (local.get $counts) (i8x16.eq (local.get $bytes) (local.get $newline))))
					(local.set $p (i32.add (local.get $p) (i32.const 16)))
					(br_if $block (i32.lt_u (local.get $p) (local.get $stop))))
				(local.set $line (i32.add (local.get $line) (call $sum (local.get $counts))))
				(br $blocks)))
		(global.set $lines (call $uncount (local.get $line) (local.get $end) (local.get $p)))
		(local.get $written))

	;; The newlines in [start, end), counted as `scan` counts them (for lines that are not searched).
	(func (export "count") (param $start i32) (param $end i32) (result i32)
		(local $p i32)
		(local $stop i32)
		(local $line i32)
		(local $counts v128)
		(local $newline v128)
		(local.set $p (local.get $start))
		(local.set $newline (i8x16.splat (i32.const 10)))
		(block $finished
			(loop $blocks
				(br_if $finished (i32.ge_u (local.get $p) (local.get $end)))
				(local.set $stop (select (local.get $end) (i32.add (local.get $p) (i32.const 4080))
					(i32.lt_u (i32.sub (local.get $end) (local.get $p)) (i32.const 4080))))
				(local.set $counts (v128.const i64x2 0 0))
				(loop $block
					(local.set $counts (i8x16.sub (local.get $counts) (i8x16.eq (v128.load (local.get $p)) (local.get $newline))))
					(local.set $p (i32.add (local.get $p) (i32.const 16)))
					(br_if $block (i32.lt_u (local.get $p) (local.get $stop))))
				(local.set $line (i32.add (local.get $line) (call $sum (local.get $counts))))
				(br $blocks)))
		(call $uncount (local.get $line) (local.get $end) (local.get $p)))

	;; Is the byte a hex digit (0-9, a-f, A-F)?
	(func $isHex (param $byte i32) (result i32)
		(i32.or
			(i32.lt_u (i32.sub (local.get $byte) (i32.const 0x30)) (i32.const 10))
			(i32.lt_u (i32.sub (i32.or (local.get $byte) (i32.const 0x20)) (i32.const 0x61)) (i32.const 6))))

	;; Is the byte a word's (0-9, a-z, A-Z, _)?
	(func $isWord (param $byte i32) (result i32)
		(i32.or
			(i32.or
				(i32.lt_u (i32.sub (local.get $byte) (i32.const 0x30)) (i32.const 10))
				(i32.lt_u (i32.sub (i32.or (local.get $byte) (i32.const 0x20)) (i32.const 0x61)) (i32.const 26)))
			(i32.eq (local.get $byte) (i32.const 0x5f))))

	;; The shape hash of each line of [start, end) (whole lines, each ending in "\n"), bit for bit as
	;; hashShape in src/signals/shape.ts: indentation, then up to `window` bytes with each digit run and
	;; each hex id (a word of 7 or more hex digits) as one "0", each quoted string as its quote, a
	;; leading `path:` (a token before a colon and a digit) as one token. For each line that is not
	;; blank, writes (hash, line index from 0, line start from `start`) at `out`; returns how many, and
	;; leaves the number of lines in $lines. Reads up to 15 bytes past `end` (a line's end is found 16
	;; bytes at a time).
	(func (export "shapes") (param $start i32) (param $end i32) (param $out i32) (param $window i32) (result i32)
		(local $from i32)
		(local $lineEnd i32)
		(local $e i32)
		(local $p i32)
		(local $line i32)
		(local $written i32)
		(local $indent i32)
		(local $hash i32)
		(local $probe i32)
		(local $emitted i32)
		(local $inDigits i32)
		(local $byte i32)
		(local $close i32)
		(local $mask i32)
		(local $run i32)
		(local $newline v128)
		(local $chunk v128)
		(local $zeroes v128)
		(local $tens v128)
		(local $doubleQuotes v128)
		(local $singleQuotes v128)
		(local $backQuotes v128)
		(local $colons v128)
		(local $spaces v128)
		(local $lowerA v128)
		(local $caseBit v128)
		(local $six v128)
		(local $twentySix v128)
		(local $underscores v128)
		(local $previous v128)
		(local $hexStarts i32)
		(local $wordBefore i32)
		(local $q i32)
		(local.set $newline (i8x16.splat (i32.const 10)))
		(local.set $zeroes (i8x16.splat (i32.const 0x30)))
		(local.set $tens (i8x16.splat (i32.const 10)))
		(local.set $doubleQuotes (i8x16.splat (i32.const 0x22)))
		(local.set $singleQuotes (i8x16.splat (i32.const 0x27)))
		(local.set $backQuotes (i8x16.splat (i32.const 0x60)))
		(local.set $colons (i8x16.splat (i32.const 0x3a)))
		(local.set $spaces (i8x16.splat (i32.const 0x20)))
		(local.set $lowerA (i8x16.splat (i32.const 0x61)))
		(local.set $caseBit (i8x16.splat (i32.const 0x20)))
		(local.set $six (i8x16.splat (i32.const 6)))
		(local.set $twentySix (i8x16.splat (i32.const 26)))
		(local.set $underscores (i8x16.splat (i32.const 0x5f)))
		(local.set $from (local.get $start))
		(block $done
			(loop $lines
				(br_if $done (i32.ge_u (local.get $from) (local.get $end)))
				;; The line's end: the first "\n" from `from`, 16 bytes at a time.
				(local.set $lineEnd (local.get $from))
				(block $found
					(loop $seek
						(local.set $mask (i8x16.bitmask (i8x16.eq (v128.load (local.get $lineEnd)) (local.get $newline))))
						(if (local.get $mask) (then
							(local.set $lineEnd (i32.add (local.get $lineEnd) (i32.ctz (local.get $mask))))
							(br $found)))
						(local.set $lineEnd (i32.add (local.get $lineEnd) (i32.const 16)))
						(br $seek)))
				(local.set $e (local.get $lineEnd))
				(if (i32.gt_u (local.get $e) (local.get $from)) (then
					(if (i32.eq (i32.load8_u offset=0 (i32.sub (local.get $e) (i32.const 1))) (i32.const 13)) (then
						(local.set $e (i32.sub (local.get $e) (i32.const 1)))))))
				;; Indentation.
				(local.set $p (local.get $from))
				(local.set $indent (i32.const 0))
				(block $indented
					(loop $indenting
						(br_if $indented (i32.ge_u (local.get $p) (local.get $e)))
						(local.set $byte (i32.load8_u (local.get $p)))
						(br_if $indented (i32.and (i32.ne (local.get $byte) (i32.const 0x20)) (i32.ne (local.get $byte) (i32.const 0x09))))
						(local.set $indent (i32.add (local.get $indent) (i32.const 1)))
						(local.set $p (i32.add (local.get $p) (i32.const 1)))
						(br $indenting)))
				(if (i32.lt_u (local.get $p) (local.get $e)) (then
					(local.set $hash (i32.mul
						(i32.xor (i32.const 0x811c9dc5)
							(select (local.get $indent) (i32.const 16) (i32.lt_u (local.get $indent) (i32.const 16))))
						(i32.const 0x01000193)))
					;; A leading `path:` followed by a digit is one token.
					;; The probe stops at the first ":" or " ", the line's end or 256 bytes on (found 16 bytes at a time).
					(local.set $close (select (local.get $e) (i32.add (local.get $p) (i32.const 256))
						(i32.lt_u (i32.sub (local.get $e) (local.get $p)) (i32.const 256))))
					(local.set $probe (local.get $p))
					(block $probed
						(loop $probing
							(br_if $probed (i32.ge_u (local.get $probe) (local.get $close)))
							(local.set $chunk (v128.load (local.get $probe)))
							(local.set $mask (i8x16.bitmask (v128.or
								(i8x16.eq (local.get $chunk) (local.get $colons))
								(i8x16.eq (local.get $chunk) (local.get $spaces)))))
							(if (local.get $mask) (then
								(local.set $probe (i32.add (local.get $probe) (i32.ctz (local.get $mask))))
								(br $probed)))
							(local.set $probe (i32.add (local.get $probe) (i32.const 16)))
							(br $probing)))
					(if (i32.gt_u (local.get $probe) (local.get $close)) (then (local.set $probe (local.get $close))))
					(if (i32.and
							(i32.and (i32.eq (i32.load8_u (local.get $probe)) (i32.const 0x3a)) (i32.gt_u (local.get $probe) (local.get $p)))
							(i32.and
								(i32.lt_u (i32.add (local.get $probe) (i32.const 1)) (local.get $e))
								(i32.lt_u (i32.sub (i32.load8_u offset=1 (local.get $probe)) (i32.const 0x30)) (i32.const 10))))
						(then
							(local.set $hash (i32.mul (i32.xor (local.get $hash) (i32.const 0x50)) (i32.const 0x01000193)))
							(local.set $p (local.get $probe))))
					;; The skeleton. Runs of plain bytes (neither digit nor quote) are found 16 bytes at a
					;; time and hashed without a test per byte; a digit or a quote is taken one at a time.
					(local.set $emitted (i32.const 0))
					(local.set $inDigits (i32.const 0))
					(block $skeleton
						(loop $next
							(br_if $skeleton (i32.ge_u (local.get $p) (local.get $e)))
							(br_if $skeleton (i32.ge_u (local.get $emitted) (local.get $window)))
							;; The plain bytes from p: up to the first digit, quote or hex digit that starts a word (a
							;; hex id may start there), the line's end and the window's last byte.
							(local.set $chunk (v128.load (local.get $p)))
							;; Hex letters (digits stop the run anyway) whose byte before is not a word's.
							(local.set $previous (v128.load offset=0 (i32.sub (local.get $p) (i32.const 1))))
							(local.set $wordBefore (i8x16.bitmask (v128.or
								(v128.or
									(i8x16.lt_u (i8x16.sub (local.get $previous) (local.get $zeroes)) (local.get $tens))
									(i8x16.lt_u (i8x16.sub (v128.or (local.get $previous) (local.get $caseBit)) (local.get $lowerA)) (local.get $twentySix)))
								(i8x16.eq (local.get $previous) (local.get $underscores)))))
							;; The line's first byte has no byte before it.
							(if (i32.eq (local.get $p) (local.get $from)) (then
								(local.set $wordBefore (i32.and (local.get $wordBefore) (i32.const -2)))))
							(local.set $hexStarts (i32.and
								(i8x16.bitmask (i8x16.lt_u (i8x16.sub (v128.or (local.get $chunk) (local.get $caseBit)) (local.get $lowerA)) (local.get $six)))
								(i32.xor (local.get $wordBefore) (i32.const -1))))
							(local.set $run (i32.ctz (i32.or (i32.or (i32.const 0x10000) (local.get $hexStarts)) (i8x16.bitmask
								(v128.or
									(v128.or
										(i8x16.lt_u (i8x16.sub (local.get $chunk) (local.get $zeroes)) (local.get $tens))
										(i8x16.eq (local.get $chunk) (local.get $doubleQuotes)))
									(v128.or
										(i8x16.eq (local.get $chunk) (local.get $singleQuotes))
										(i8x16.eq (local.get $chunk) (local.get $backQuotes))))))))
							(local.set $run (select (local.get $run) (i32.sub (local.get $e) (local.get $p))
								(i32.lt_u (local.get $run) (i32.sub (local.get $e) (local.get $p)))))
							(local.set $run (select (local.get $run) (i32.sub (local.get $window) (local.get $emitted))
								(i32.lt_u (local.get $run) (i32.sub (local.get $window) (local.get $emitted)))))
							(if (local.get $run) (then
								(local.set $inDigits (i32.const 0))
								(local.set $emitted (i32.add (local.get $emitted) (local.get $run)))
								(local.set $run (i32.add (local.get $p) (local.get $run)))
								(loop $plain
									(local.set $hash (i32.mul (i32.xor (local.get $hash) (i32.load8_u (local.get $p))) (i32.const 0x01000193)))
									(local.set $p (i32.add (local.get $p) (i32.const 1)))
									(br_if $plain (i32.lt_u (local.get $p) (local.get $run))))
								(br $next)))
							(local.set $byte (i32.load8_u (local.get $p)))
							;; A hex id (7 or more hex digits that make a whole word) is one token, as a digit run is.
							(if (i32.and (call $isHex (local.get $byte))
									(i32.or (i32.eq (local.get $p) (local.get $from))
										(i32.eqz (call $isWord (i32.load8_u offset=0 (i32.sub (local.get $p) (i32.const 1)))))))
								(then
									(local.set $q (i32.add (local.get $p) (i32.const 1)))
									(block $hexEnd
										(loop $hexRun
											(br_if $hexEnd (i32.ge_u (local.get $q) (local.get $e)))
											(br_if $hexEnd (i32.eqz (call $isHex (i32.load8_u (local.get $q)))))
											(local.set $q (i32.add (local.get $q) (i32.const 1)))
											(br $hexRun)))
									(if (i32.and (i32.ge_u (i32.sub (local.get $q) (local.get $p)) (i32.const 7))
											(i32.or (i32.ge_u (local.get $q) (local.get $e)) (i32.eqz (call $isWord (i32.load8_u (local.get $q))))))
										(then
											(local.set $hash (i32.mul (i32.xor (local.get $hash) (i32.const 0x30)) (i32.const 0x01000193)))
											(local.set $emitted (i32.add (local.get $emitted) (i32.const 1)))
											(local.set $inDigits (i32.const 0))
											(local.set $p (local.get $q))
											(br $next)))))
							(local.set $p (i32.add (local.get $p) (i32.const 1)))
							(if (i32.lt_u (i32.sub (local.get $byte) (i32.const 0x30)) (i32.const 10)) (then
								(if (i32.eqz (local.get $inDigits)) (then
									(local.set $hash (i32.mul (i32.xor (local.get $hash) (i32.const 0x30)) (i32.const 0x01000193)))
									(local.set $emitted (i32.add (local.get $emitted) (i32.const 1)))
									(local.set $inDigits (i32.const 1))))
								(br $next)))
							(local.set $inDigits (i32.const 0))
							;; A hex letter that starts a word but no hex id: a plain byte.
							(if (i32.and (i32.ne (local.get $byte) (i32.const 0x22))
									(i32.and (i32.ne (local.get $byte) (i32.const 0x27)) (i32.ne (local.get $byte) (i32.const 0x60))))
								(then
									(local.set $hash (i32.mul (i32.xor (local.get $hash) (local.get $byte)) (i32.const 0x01000193)))
									(local.set $emitted (i32.add (local.get $emitted) (i32.const 1)))
									(br $next)))
							;; A quote.
							;; A quoted string is one token: skip to its closing quote (within 200 bytes).
							(local.set $close (local.get $p))
							(block $closed
								(loop $closing
									(br_if $closed (i32.ge_u (local.get $close) (local.get $e)))
									(br_if $closed (i32.ge_u (i32.sub (local.get $close) (local.get $p)) (i32.const 200)))
									(br_if $closed (i32.eq (i32.load8_u (local.get $close)) (local.get $byte)))
									(local.set $close (i32.add (local.get $close) (i32.const 1)))
									(br $closing)))
							(if (i32.lt_u (local.get $close) (local.get $e)) (then
								(if (i32.eq (i32.load8_u (local.get $close)) (local.get $byte)) (then
									(local.set $p (i32.add (local.get $close) (i32.const 1)))))))
							(local.set $hash (i32.mul (i32.xor (local.get $hash) (local.get $byte)) (i32.const 0x01000193)))
							(local.set $emitted (i32.add (local.get $emitted) (i32.const 1)))
							(br $next)))
					(i32.store offset=0 (local.get $out) (local.get $hash))
					(i32.store offset=4 (local.get $out) (local.get $line))
					(i32.store offset=8 (local.get $out) (i32.sub (local.get $from) (local.get $start)))
					(local.set $out (i32.add (local.get $out) (i32.const 12)))
					(local.set $written (i32.add (local.get $written) (i32.const 1)))))
				(local.set $line (i32.add (local.get $line) (i32.const 1)))
				(local.set $from (i32.add (local.get $lineEnd) (i32.const 1)))
				(br $lines)))
		(global.set $lines (local.get $line))
		(local.get $written))
)
