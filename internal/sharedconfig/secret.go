package sharedconfig

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Key encrypts the secrets of the shared configuration (passwords) with
// AES-256-GCM before they reach etcd: etcd holds no clear-text secret,
// and reading its keys is not enough to log in anywhere. Every proxy of a
// cluster needs the same key file.
type Key struct {
	raw []byte
	// ID names the key without revealing it (first bytes of its SHA-256):
	// a configuration written with another key is recognised as such.
	ID string
}

// LoadOrCreateKey reads the key file at path (64 hex digits), creating it
// with a new random key (mode 0600) when it does not exist.
func LoadOrCreateKey(path string) (Key, bool, error) {
	b, err := os.ReadFile(path)
	created := false
	if errors.Is(err, os.ErrNotExist) {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return Key{}, false, err
		}
		if err := os.WriteFile(path, []byte(hex.EncodeToString(raw)+"\n"), 0o600); err != nil {
			return Key{}, false, fmt.Errorf("discovery.secret_key_file %s: %w", path, err)
		}
		b, created = []byte(hex.EncodeToString(raw)), true
	} else if err != nil {
		return Key{}, false, fmt.Errorf("discovery.secret_key_file %s: %w", path, err)
	}
	raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(raw) != 32 {
		return Key{}, false, fmt.Errorf("discovery.secret_key_file %s: not a key (64 hexadecimal digits); copy the file from another proxy of the cluster", path)
	}
	return NewKey(raw), created, nil
}

// NewKey wraps 32 raw bytes.
func NewKey(raw []byte) Key {
	sum := sha256.Sum256(raw)
	return Key{raw: raw, ID: hex.EncodeToString(sum[:6])}
}

// Seal encrypts a secret ("" stays "").
func (k Key) Seal(plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	gcm, err := k.gcm()
	if err != nil {
		return "", err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(gcm.Seal(nonce, nonce, []byte(plain), nil)), nil
}

// Open decrypts what Seal produced.
func (k Key) Open(sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	gcm, err := k.gcm()
	if err != nil {
		return "", err
	}
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(b) < gcm.NonceSize() {
		return "", errors.New("not a sealed secret")
	}
	plain, err := gcm.Open(nil, b[:gcm.NonceSize()], b[gcm.NonceSize():], nil)
	if err != nil {
		return "", errors.New("cannot decrypt: sealed with another key")
	}
	return string(plain), nil
}

func (k Key) gcm() (cipher.AEAD, error) {
	block, err := aes.NewCipher(k.raw)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
