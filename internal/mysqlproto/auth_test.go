package mysqlproto

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"sync"
	"testing"
)

// Expected values were computed independently with Python's hashlib for
// password "secret" and the scramble 0x01..0x14.
const (
	nativeSecretHash   = "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7"
	nativeSecretResp   = "b32bb3a583e1340c0a1108d58b1be49781ad8c2f"
	sha2SecretHash     = "3881219d087dd9c634373fd33dfa33a2cb6bfc6c520b64b8bb60ef2ceb534ae7"
	sha2SecretResponse = "746ebe205d56a0707acb3e796e834e0dd7b1d61743b26bd5202c7a623230c7c9"
)

func xorBytes(a, b []byte) []byte {
	out := make([]byte, len(a))
	for i := range a {
		out[i] = a[i] ^ b[i]
	}
	return out
}

func TestNativePasswordVectors(t *testing.T) {
	got := ScrambleNativePassword("secret", testScramble)
	if hex.EncodeToString(got) != nativeSecretResp {
		t.Fatalf("scramble %x", got)
	}
	// Independent computation from the definition.
	s1 := sha1.Sum([]byte("secret"))
	s2 := sha1.Sum(s1[:])
	m := sha1.Sum(append(bytes.Clone(testScramble), s2[:]...))
	if !bytes.Equal(got, xorBytes(s1[:], m[:])) {
		t.Fatal("scramble differs from the definition")
	}

	hash := NativePasswordHash("secret")
	if FormatNativePasswordHash(hash) != nativeSecretHash {
		t.Fatalf("hash %s", FormatNativePasswordHash(hash))
	}
	parsed, err := ParseNativePasswordHash(nativeSecretHash)
	if err != nil || !bytes.Equal(parsed, hash) {
		t.Fatalf("parse %x %v", parsed, err)
	}
	for _, bad := range []string{"", "14E65567ABDB5135D0CFD9A70B3032C179A49EE7", "*XYZ", "*" + nativeSecretHash[1:40] + "G"} {
		if _, err := ParseNativePasswordHash(bad); err == nil {
			t.Errorf("ParseNativePasswordHash(%q) accepted", bad)
		}
	}

	if !VerifyNativePassword(testScramble, got, hash) {
		t.Fatal("correct response rejected")
	}
	if VerifyNativePassword(testScramble, ScrambleNativePassword("Secret", testScramble), hash) {
		t.Fatal("wrong password accepted")
	}
	if VerifyNativePassword(testScramble, got[:19], hash) || VerifyNativePassword(testScramble, got, hash[:19]) {
		t.Fatal("short input accepted")
	}
	stage1, ok := RecoverNativeStage1(testScramble, got, hash)
	if !ok || !bytes.Equal(stage1, s1[:]) {
		t.Fatal("RecoverNativeStage1")
	}
	other := bytes.Repeat([]byte{'z'}, 20)
	if !bytes.Equal(ScrambleNativeStage1(stage1, other), ScrambleNativePassword("secret", other)) {
		t.Fatal("stage1 scramble differs")
	}
	if ScrambleNativePassword("", testScramble) != nil {
		t.Fatal("empty password must give an empty response")
	}
}

func TestCachingSHA2Vectors(t *testing.T) {
	got := ScrambleCachingSHA2Password("secret", testScramble)
	if hex.EncodeToString(got) != sha2SecretResponse {
		t.Fatalf("scramble %x", got)
	}
	h1 := sha256.Sum256([]byte("secret"))
	h2 := sha256.Sum256(h1[:])
	m := sha256.Sum256(append(h2[:], testScramble...))
	if !bytes.Equal(got, xorBytes(h1[:], m[:])) {
		t.Fatal("scramble differs from the definition")
	}
	hash := CachingSHA2Hash("secret")
	if hex.EncodeToString(hash) != sha2SecretHash {
		t.Fatalf("hash %x", hash)
	}
	if !VerifyCachingSHA2Password(testScramble, got, hash) {
		t.Fatal("correct response rejected")
	}
	if VerifyCachingSHA2Password(testScramble, ScrambleCachingSHA2Password("secreT", testScramble), hash) {
		t.Fatal("wrong password accepted")
	}
	if VerifyCachingSHA2Password(bytes.Repeat([]byte{9}, 20), got, hash) {
		t.Fatal("response accepted with another nonce")
	}
	stage1, ok := RecoverCachingSHA2Stage1(testScramble, got, hash)
	if !ok || !bytes.Equal(stage1, h1[:]) {
		t.Fatal("RecoverCachingSHA2Stage1")
	}
	if ScrambleCachingSHA2Password("", testScramble) != nil {
		t.Fatal("empty password must give an empty response")
	}
}

var (
	testKeyOnce sync.Once
	testKey     *rsa.PrivateKey
)

func rsaKey(t testing.TB) *rsa.PrivateKey {
	testKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		testKey = k
	})
	return testKey
}

func TestRSAPasswordRoundTrip(t *testing.T) {
	key := rsaKey(t)
	pemKey, err := MarshalPublicKeyPEM(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKeyPEM(pemKey)
	if err != nil || !pub.Equal(&key.PublicKey) {
		t.Fatalf("PEM round trip: %v", err)
	}
	for _, pw := range []string{"", "secret", "a password longer than the twenty byte scramble"} {
		ct, err := EncryptPassword(pw, testScramble, pub)
		if err != nil {
			t.Fatal(err)
		}
		if len(ct) != key.Size() {
			t.Fatalf("ciphertext of %d bytes", len(ct))
		}
		got, err := DecryptPassword(ct, testScramble, key)
		if err != nil || string(got) != pw {
			t.Fatalf("%q: got %q, %v", pw, got, err)
		}
		// The nonce is part of the plaintext: another connection's
		// scramble does not give the password back.
		if got, err := DecryptPassword(ct, bytes.Repeat([]byte{'q'}, 20), key); err == nil && string(got) == pw && pw != "" {
			t.Fatal("decrypted with the wrong scramble")
		}
	}
	if _, err := DecryptPassword([]byte("garbage"), testScramble, key); err == nil {
		t.Fatal("garbage ciphertext accepted")
	}

	// PKCS #1 keys are accepted too; non-PEM input is not.
	pkcs1 := pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: mustPKCS1(&key.PublicKey)})
	if pub, err := ParsePublicKeyPEM(pkcs1); err != nil || !pub.Equal(&key.PublicKey) {
		t.Fatalf("PKCS #1: %v", err)
	}
	if _, err := ParsePublicKeyPEM([]byte("not a key")); err == nil {
		t.Fatal("non-PEM accepted")
	}
}

func mustPKCS1(pub *rsa.PublicKey) []byte {
	return x509.MarshalPKCS1PublicKey(pub)
}
