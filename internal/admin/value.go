package admin

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Values inside this package are always one of int64, float64, string or
// nil. normalize maps whatever a table returns onto that set, so the rest
// of the package can switch on four cases only.
func normalize(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, string:
		return x
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint:
		return uintValue(uint64(x))
	case uint64:
		return uintValue(x)
	case float32:
		return float64(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case []byte:
		return string(x)
	case time.Time:
		return x.Format(time.DateTime)
	case time.Duration:
		return x.String()
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// uintValue keeps a uint64 exact when it fits an int64.
func uintValue(u uint64) any {
	if u <= math.MaxInt64 {
		return int64(u)
	}
	return float64(u)
}

// normalizeRow returns a copy of r with n canonical values, padding
// missing ones with NULL and dropping extras.
func normalizeRow(r []any, n int) []any {
	out := make([]any, n)
	for i := 0; i < n && i < len(r); i++ {
		out[i] = normalize(r[i])
	}
	return out
}

// formatValue renders a canonical value as MySQL's text protocol does.
// null reports NULL, which the protocol encodes separately from "".
func formatValue(v any) (s string, null bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case int64:
		return strconv.FormatInt(x, 10), false
	case float64:
		return formatFloat(x), false
	case string:
		return x, false
	}
	return fmt.Sprint(v), false
}

// formatFloat prints the shortest text that reads back as the same
// float64, which both MySQL clients and Go's ParseFloat accept.
func formatFloat(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// kindOf returns the kind of a canonical non-nil value.
func kindOf(v any) Kind {
	switch v.(type) {
	case int64:
		return Int
	case float64:
		return Float
	}
	return Text
}

// convertError explains why a value does not fit a column; the caller
// turns it into the matching MySQL error.
type convertError struct {
	outOfRange bool
}

// convert converts a canonical value to kind k the way an operator would
// expect when writing config: numbers may be quoted ('42'), integers may be
// written as 42.0, but 'abc' is not a number and 4.5 is not an integer.
// Silent MySQL-style truncation would turn a typo into a wrong setting.
func convert(v any, k Kind) (any, *convertError) {
	if v == nil {
		return nil, nil
	}
	switch k {
	case Int:
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			return floatToInt(x)
		case string:
			s := strings.TrimSpace(x)
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i, nil
			} else if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return nil, &convertError{outOfRange: true}
			}
			if f, ok := parseNumber(s); ok {
				return floatToInt(f)
			}
			return nil, &convertError{}
		}
	case Float:
		var f float64
		switch x := v.(type) {
		case int64:
			f = float64(x)
		case float64:
			f = x
		case string:
			var ok bool
			if f, ok = parseNumber(strings.TrimSpace(x)); !ok {
				return nil, &convertError{}
			}
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, &convertError{outOfRange: true}
		}
		return f, nil
	case Text:
		s, _ := formatValue(v)
		return s, nil
	}
	return nil, &convertError{}
}

// floatToInt accepts floats that are whole numbers within int64 range.
func floatToInt(f float64) (any, *convertError) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return nil, &convertError{}
	}
	if f < -(1<<63) || f >= 1<<63 {
		return nil, &convertError{outOfRange: true}
	}
	return int64(f), nil
}

// parseNumber parses a decimal number written as SQL would, rejecting the
// extra spellings strconv allows ("inf", "0x1p3", "1_000").
func parseNumber(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}
