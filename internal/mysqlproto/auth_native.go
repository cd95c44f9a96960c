package mysqlproto

import (
	"crypto/sha1"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

// NativePasswordPlugin is the name of the SHA-1 challenge/response plugin,
// the default of MariaDB and of MySQL before 8.0.
const NativePasswordPlugin = "mysql_native_password"

// ClearPasswordPlugin sends the password in clear text (NUL-terminated).
// Only use it over TLS.
const ClearPasswordPlugin = "mysql_clear_password"

// ScrambleNativePassword computes the mysql_native_password auth response
//
//	SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password)))
//
// An empty password yields an empty response, as MySQL clients send.
func ScrambleNativePassword(password string, scramble []byte) []byte {
	if password == "" {
		return nil
	}
	stage1 := sha1.Sum([]byte(password))
	return ScrambleNativeStage1(stage1[:], scramble)
}

// NativePasswordHash returns SHA1(SHA1(password)), what a server stores to
// check mysql_native_password logins without knowing the password.
func NativePasswordHash(password string) []byte {
	stage1 := sha1.Sum([]byte(password))
	stage2 := sha1.Sum(stage1[:])
	return stage2[:]
}

// FormatNativePasswordHash renders a 20-byte hash the way mysql.user and
// PASSWORD() show it: '*' and 40 upper-case hex digits.
func FormatNativePasswordHash(hash []byte) string {
	return "*" + strings.ToUpper(hex.EncodeToString(hash))
}

// ParseNativePasswordHash parses the "*HEX" form back into 20 bytes.
func ParseNativePasswordHash(s string) ([]byte, error) {
	if len(s) != 41 || s[0] != '*' {
		return nil, malformed("native password hash")
	}
	h, err := hex.DecodeString(s[1:])
	if err != nil {
		return nil, malformed("native password hash")
	}
	return h, nil
}

// VerifyNativePassword checks a mysql_native_password auth response against
// the stored hash SHA1(SHA1(password)). It recovers SHA1(password) from the
// response and checks that hashing it gives the stored value, in constant
// time.
func VerifyNativePassword(scramble, authResponse, hash []byte) bool {
	_, ok := RecoverNativeStage1(scramble, authResponse, hash)
	return ok
}

// RecoverNativeStage1 verifies a mysql_native_password response like
// VerifyNativePassword and, on success, returns SHA1(password). That value
// is enough to compute native-password responses for other scrambles, so a
// proxy can log into backends as the client without knowing its password.
func RecoverNativeStage1(scramble, authResponse, hash []byte) ([]byte, bool) {
	if len(authResponse) != sha1.Size || len(hash) != sha1.Size {
		return nil, false
	}
	h := sha1.New()
	h.Write(scramble)
	h.Write(hash)
	stage1 := h.Sum(nil)
	for i := range stage1 {
		stage1[i] ^= authResponse[i]
	}
	check := sha1.Sum(stage1)
	if subtle.ConstantTimeCompare(check[:], hash) != 1 {
		return nil, false
	}
	return stage1, true
}

// ScrambleNativeStage1 computes a mysql_native_password response from
// SHA1(password) instead of the password (see RecoverNativeStage1).
func ScrambleNativeStage1(stage1, scramble []byte) []byte {
	stage2 := sha1.Sum(stage1)
	h := sha1.New()
	h.Write(scramble)
	h.Write(stage2[:])
	out := h.Sum(nil)
	for i := range out {
		if i < len(stage1) {
			out[i] ^= stage1[i]
		}
	}
	return out
}
