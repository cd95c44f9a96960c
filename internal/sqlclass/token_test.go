package sqlclass

import (
	"fmt"
	"strings"
	"testing"
)

// tokens renders every token of src as Kind:text, comments included.
func tokens(src string) string {
	t := NewTokenizer(src)
	t.KeepComments(true)
	var b strings.Builder
	for {
		tok := t.Next()
		if tok.Kind == TokEOF {
			return strings.TrimSpace(b.String())
		}
		fmt.Fprintf(&b, "%s:%s ", tok.Kind, tok.Text(src))
	}
}

func TestTokenizer(t *testing.T) {
	tests := []struct{ src, want string }{
		{"SELECT a FROM t", "Word:SELECT Word:a Word:FROM Word:t"},
		{"'it''s' 'a\\'b' \"x\"\"y\" `q``q`", "String:'it''s' String:'a\\'b' String:\"x\"\"y\" QuotedIdent:`q``q`"},
		{"'a;b' \"c;d\" `e;f`", "String:'a;b' String:\"c;d\" QuotedIdent:`e;f`"},
		{"`a\\` b", "QuotedIdent:`a\\` Word:b"}, // no backslash escapes in identifiers
		{"1 1.5 .5 1e3 1.5E-3 0x1F X'0f' x'' 0b101 B'1'", "Number:1 Number:1.5 Number:.5 Number:1e3 Number:1.5E-3 Number:0x1F Number:X'0f' Number:x'' Number:0b101 Number:B'1'"},
		{"1abc 0xZZ 0X1F t1", "Word:1abc Word:0xZZ Word:0X1F Word:t1"},
		{"t.1col t.a", "Word:t Punct:. Word:1col Word:t Punct:. Word:a"},
		{"N'nat' n'x'", "String:N'nat' String:n'x'"},
		{"@a @'b c' @`d` @\"e\" @a.b", "UserVar:@a UserVar:@'b c' UserVar:@`d` UserVar:@\"e\" UserVar:@a.b"},
		{"@@x @@session.x @@GLOBAL.`y`", "SysVar:@@x SysVar:@@session.x SysVar:@@GLOBAL.`y`"},
		{"'u'@'h' `u`@`h`", "String:'u' Punct:@ String:'h' QuotedIdent:`u` Punct:@ QuotedIdent:`h`"},
		{"a:=1 b>=2 c<=>3 d!=4 e<>5 f<<1 g->'$' h->>'$' i||j k&&l", "Word:a Punct::= Number:1 Word:b Punct:>= Number:2 Word:c Punct:<=> Number:3 Word:d Punct:!= Number:4 Word:e Punct:<> Number:5 Word:f Punct:<< Number:1 Word:g Punct:-> String:'$' Word:h Punct:->> String:'$' Word:i Punct:|| Word:j Word:k Punct:&& Word:l"},
		{"? , ; ( )", "Param:? Punct:, Punct:; Punct:( Punct:)"},
		{"a /* c */ b", "Word:a Comment:/* c */ Word:b"},
		{"a -- c\nb", "Word:a Comment:-- c Word:b"},
		{"a --\tc\nb", "Word:a Comment:--\tc Word:b"},
		{"a --", "Word:a Comment:--"},
		{"a --c", "Word:a Punct:- Punct:- Word:c"},
		{"1--1", "Number:1 Punct:- Punct:- Number:1"},
		{"a # c\nb", "Word:a Comment:# c Word:b"},
		{"a#c", "Word:a Comment:#c"},
		{"/*!40101 SET x=1 */", "Word:SET Word:x Punct:= Number:1"},
		{"/*!SET*/", "Word:SET"},
		{"/*M!100100 a */ b", "Word:a Word:b"},
		{"/*!4010 a */", "Number:4010 Word:a"}, // not a 5/6-digit version
		{"/*+ hint */ a", "Comment:/*+ hint */ Word:a"},
		{"a * / b", "Word:a Punct:* Punct:/ Word:b"},
		{"'unterminated", "String:'unterminated"},
		{"`unterminated", "QuotedIdent:`unterminated"},
		{"/* unterminated", "Comment:/* unterminated"},
		{"SELECT 'a\\", "Word:SELECT String:'a\\"},
		{"héllo wörld", "Word:héllo Word:wörld"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := tokens(tc.src); got != tc.want {
			t.Errorf("tokens(%q)\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

func TestTokenizerSkipsComments(t *testing.T) {
	src := "/* a */ SELECT -- b\n 1 # c\n"
	tk := NewTokenizer(src)
	var got []string
	for tok := tk.Next(); tok.Kind != TokEOF; tok = tk.Next() {
		got = append(got, tok.Text(src))
	}
	if strings.Join(got, " ") != "SELECT 1" {
		t.Errorf("got %q", got)
	}
	if tk.Offset() != len(src) {
		t.Errorf("Offset() = %d at EOF, want %d", tk.Offset(), len(src))
	}
}

func TestFirstKeyword(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"SELECT 1", "SELECT"},
		{"  /* x */ (select 1)", "select"},
		{"-- c\n# d\nUpdate t", "Update"},
		{"/*!40101 SET NAMES utf8 */", "SET"},
		{"'str'", ""},
		{"", ""},
	}
	for _, tc := range tests {
		if got := FirstKeyword(tc.sql); got != tc.want {
			t.Errorf("FirstKeyword(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}

func TestStringers(t *testing.T) {
	for k := Kind(0); k < numKinds; k++ {
		if s := k.String(); s == "" || s == "Kind(?)" {
			t.Errorf("Kind(%d) has no name", k)
		}
	}
	if numKinds.String() != "Kind(?)" {
		t.Error("out-of-range Kind should print as Kind(?)")
	}
	for h, want := range map[Hint]string{HintNone: "none", HintWriter: "writer", HintReader: "reader", HintHostgroup: "hostgroup", 9: "Hint(?)"} {
		if h.String() != want {
			t.Errorf("Hint(%d).String() = %q, want %q", h, h.String(), want)
		}
	}
	for k := TokEOF; k <= TokComment; k++ {
		if s := k.String(); s == "" || s == "TokenKind(?)" {
			t.Errorf("TokenKind(%d) has no name", k)
		}
	}
}
