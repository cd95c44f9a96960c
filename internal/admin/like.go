package admin

import "strings"

// likeMatch reports whether s matches the SQL LIKE pattern: % matches any
// run of characters, _ exactly one, and a backslash makes the next
// character literal. Matching ignores case (Unicode simple folding), as
// both SQLite and MySQL's default collations do for LIKE.
//
// It is the classic greedy matcher that remembers only the last %: on a
// mismatch it retries one character further from that %. That is linear
// in practice and never worse than len(s)*len(pattern), whatever the
// pattern, so an operator's (or a fuzzer's) pattern cannot stall a
// connection.
func likeMatch(s, pattern string) bool {
	str := []rune(strings.ToLower(s))
	pat := compileLikePattern(strings.ToLower(pattern))
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(str) {
		if pi < len(pat) {
			switch p := pat[pi]; {
			case p.any:
				starP, starS = pi, si
				pi++
				continue
			case p.one || p.r == str[si]:
				si++
				pi++
				continue
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		si = starS
		pi = starP + 1
	}
	for pi < len(pat) && pat[pi].any {
		pi++
	}
	return pi == len(pat)
}

// likeElem is one element of a compiled LIKE pattern.
type likeElem struct {
	any bool // %
	one bool // _
	r   rune // a literal character otherwise
}

func compileLikePattern(p string) []likeElem {
	rs := []rune(p)
	out := make([]likeElem, 0, len(rs))
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '%':
			if n := len(out); n > 0 && out[n-1].any {
				continue // %% is the same as %
			}
			out = append(out, likeElem{any: true})
		case '_':
			out = append(out, likeElem{one: true})
		case '\\':
			if i+1 < len(rs) {
				i++
			}
			out = append(out, likeElem{r: rs[i]})
		default:
			out = append(out, likeElem{r: rs[i]})
		}
	}
	return out
}
