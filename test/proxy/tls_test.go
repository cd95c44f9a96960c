package proxy_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/config"
)

// selfSigned writes a certificate and key for 127.0.0.1 and returns their paths.
func selfSigned(t *testing.T) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "galeon-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, keyPath
}

// testTLS: with require_tls, clients must use TLS; a caching_sha2_password
// account authenticates over it; the mariadb CLI connects with --ssl.
func testTLS(t *testing.T, pt *proxyUnderTest) {
	cert, key := selfSigned(t)
	tp := startProxy(t, pt.sb, func(c *config.Config) {
		c.Proxy.TLSCert, c.Proxy.TLSKey, c.Proxy.RequireTLS = cert, key, true
		c.Users[0].AuthPlugin = "caching_sha2_password"
	})
	if err := mysql.RegisterTLSConfig("galeon-test", &tls.Config{InsecureSkipVerify: true}); err != nil {
		t.Fatal(err)
	}
	secure, err := sql.Open("mysql", tp.dsn(func(c *mysql.Config) { c.TLSConfig = "galeon-test" }))
	if err != nil {
		t.Fatal(err)
	}
	defer secure.Close()
	var one int
	if err := secure.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("TLS + caching_sha2_password through galeon: %v", err)
	}
	plain, _ := sql.Open("mysql", tp.dsn(nil))
	defer plain.Close()
	if err := plain.Ping(); err == nil || !strings.Contains(err.Error(), "requires TLS") {
		t.Errorf("plain connection with require_tls: %v, want a refusal saying TLS is required", err)
	}
	host, port := splitAddr(tp.addr)
	out, err := exec.Command("mariadb", "-h"+host, "-P"+port, "-u"+pt.sb.Credentials.AppUser, "-p"+pt.sb.Credentials.AppPassword,
		"--ssl", "--ssl-verify-server-cert=0", "-N", "-B", "-e", "SELECT 'tls-ok'").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "tls-ok" {
		t.Errorf("mariadb --ssl through galeon (caching_sha2_password account): %v %q", err, out)
	}
}
