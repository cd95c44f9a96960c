package mysqlproto

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// CachingSHA2PasswordPlugin is the name of MySQL 8's default plugin.
const CachingSHA2PasswordPlugin = "caching_sha2_password"

// caching_sha2_password AuthMoreData codes.
const (
	// CachingSHA2RequestPublicKey is sent by a client (as a bare byte) to
	// ask for the server's RSA public key.
	CachingSHA2RequestPublicKey byte = 0x02
	// CachingSHA2FastAuthSuccess follows 0x01 when the server's cache
	// verified the scramble; an OK packet comes next.
	CachingSHA2FastAuthSuccess byte = 0x03
	// CachingSHA2PerformFullAuth follows 0x01 when the server needs the
	// password itself: in clear over TLS, or RSA-encrypted.
	CachingSHA2PerformFullAuth byte = 0x04
)

// ScrambleCachingSHA2Password computes the caching_sha2_password fast-auth
// response
//
//	SHA256(password) XOR SHA256(SHA256(SHA256(password)) + nonce)
//
// An empty password yields an empty response.
func ScrambleCachingSHA2Password(password string, nonce []byte) []byte {
	if password == "" {
		return nil
	}
	stage1 := sha256.Sum256([]byte(password))
	return ScrambleCachingSHA2Stage1(stage1[:], nonce)
}

// ScrambleCachingSHA2Stage1 computes the fast-auth response from
// SHA256(password) (see RecoverCachingSHA2Stage1).
func ScrambleCachingSHA2Stage1(stage1, nonce []byte) []byte {
	stage2 := sha256.Sum256(stage1)
	h := sha256.New()
	h.Write(stage2[:])
	h.Write(nonce)
	out := h.Sum(nil)
	for i := range out {
		if i < len(stage1) {
			out[i] ^= stage1[i]
		}
	}
	return out
}

// CachingSHA2Hash returns SHA256(SHA256(password)), the value the server's
// cache holds for fast authentication.
func CachingSHA2Hash(password string) []byte {
	stage1 := sha256.Sum256([]byte(password))
	stage2 := sha256.Sum256(stage1[:])
	return stage2[:]
}

// VerifyCachingSHA2Password checks a fast-auth response against the cached
// SHA256(SHA256(password)), in constant time.
func VerifyCachingSHA2Password(nonce, authResponse, hash []byte) bool {
	_, ok := RecoverCachingSHA2Stage1(nonce, authResponse, hash)
	return ok
}

// RecoverCachingSHA2Stage1 verifies a fast-auth response and on success
// returns SHA256(password), which lets a proxy pass fast auth on a backend
// whose cache holds the same password.
func RecoverCachingSHA2Stage1(nonce, authResponse, hash []byte) ([]byte, bool) {
	if len(authResponse) != sha256.Size || len(hash) != sha256.Size {
		return nil, false
	}
	h := sha256.New()
	h.Write(hash)
	h.Write(nonce)
	stage1 := h.Sum(nil)
	for i := range stage1 {
		stage1[i] ^= authResponse[i]
	}
	check := sha256.Sum256(stage1)
	if subtle.ConstantTimeCompare(check[:], hash) != 1 {
		return nil, false
	}
	return stage1, true
}

// xorPassword returns (password + NUL) XOR scramble, the scramble repeated
// as needed. This is what caching_sha2_password (and sha256_password)
// encrypt with RSA, so the ciphertext is bound to this connection's nonce.
func xorPassword(password, scramble []byte) []byte {
	buf := make([]byte, len(password)+1)
	copy(buf, password)
	if len(scramble) == 0 {
		return buf
	}
	for i := range buf {
		buf[i] ^= scramble[i%len(scramble)]
	}
	return buf
}

// EncryptPassword prepares the RSA full-authentication response of
// caching_sha2_password for a connection without TLS: the NUL-terminated
// password XOR-ed with the scramble, encrypted with RSA-OAEP (SHA-1) under
// the server's public key.
func EncryptPassword(password string, scramble []byte, pub *rsa.PublicKey) ([]byte, error) {
	plain := xorPassword([]byte(password), scramble)
	ct, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, pub, plain, nil)
	if err != nil {
		return nil, fmt.Errorf("mysqlproto: encrypt password: %w", err)
	}
	return ct, nil
}

// DecryptPassword is the server side of EncryptPassword: it returns the
// password without its terminating NUL.
func DecryptPassword(ciphertext, scramble []byte, priv *rsa.PrivateKey) ([]byte, error) {
	plain, err := rsa.DecryptOAEP(sha1.New(), nil, priv, ciphertext, nil)
	if err != nil {
		return nil, fmt.Errorf("mysqlproto: decrypt password: %w", err)
	}
	if len(scramble) > 0 {
		for i := range plain {
			plain[i] ^= scramble[i%len(scramble)]
		}
	}
	if n := len(plain); n > 0 && plain[n-1] == 0 {
		plain = plain[:n-1]
	}
	return plain, nil
}

// ParsePublicKeyPEM decodes the RSA public key a server sends in answer to
// CachingSHA2RequestPublicKey (or reads from a file). Both PKIX ("PUBLIC
// KEY", what MySQL sends) and PKCS #1 ("RSA PUBLIC KEY") are accepted.
func ParsePublicKeyPEM(b []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("mysqlproto: no PEM block in server public key")
	}
	switch block.Type {
	case "RSA PUBLIC KEY":
		return x509.ParsePKCS1PublicKey(block.Bytes)
	default:
		key, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("mysqlproto: server public key: %w", err)
		}
		pub, ok := key.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("mysqlproto: server public key is %T, not RSA", key)
		}
		return pub, nil
	}
}

// MarshalPublicKeyPEM encodes pub as a PKIX "PUBLIC KEY" PEM block, the
// form MySQL clients expect.
func MarshalPublicKeyPEM(pub *rsa.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}
