package sandbox

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

func (s *State) tlsDir() string { return filepath.Join(s.Dir, "tls") }

// TLSFiles returns the PEM files of a sandbox created with Options.TLS:
// the CA that signed the nodes' certificate, and the certificate and key
// every node serves (valid for 127.0.0.1 and localhost). Clients verify
// the nodes against ca; a proxy in front of them may serve cert and key.
func (s *State) TLSFiles() (ca, cert, key string) {
	d := s.tlsDir()
	return filepath.Join(d, "ca.pem"), filepath.Join(d, "server.pem"), filepath.Join(d, "server-key.pem")
}

// writeTLSFiles creates a CA and a server certificate signed by it in
// tlsDir. The key is owned by mysql (mariadbd reads it) with mode 0600.
func (s *State) writeTLSFiles() error {
	if err := os.MkdirAll(s.tlsDir(), 0o755); err != nil {
		return err
	}
	caPEM, certPEM, keyPEM, err := newTLSMaterial(time.Now())
	if err != nil {
		return err
	}
	ca, cert, key := s.TLSFiles()
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{ca, caPEM, 0o644}, {cert, certPEM, 0o644}, {key, keyPEM, 0o600}} {
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return err
		}
	}
	return chownMysql(key)
}

// newTLSMaterial returns a self-signed CA certificate and a server
// certificate and PKCS#8 key signed by it, all PEM-encoded.
func newTLSMaterial(now time.Time) (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "galeon sandbox CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}
