package etcdtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TLSFiles are the PEM files of a server started by StartTLS: the CA that
// signed its certificate, and a client certificate and key the server
// accepts (it requires one).
type TLSFiles struct {
	CA, ClientCert, ClientKey string
	serverCert, serverKey     string
}

// StartTLS starts a single-member etcd that serves clients over TLS only
// and requires a client certificate signed by its CA (made for the test,
// with a server certificate for 127.0.0.1).
func StartTLS(t testing.TB) (*Server, TLSFiles) {
	t.Helper()
	requireBinary(t)
	files := makeCerts(t, t.TempDir())
	ports := freePorts(t, 2)
	s := &Server{t: t, name: "m0", dir: t.TempDir(), clientPort: ports[0], peerPort: ports[1], clusterTok: "memfs-test-tls", tls: &files}
	s.cluster = s.name + "=" + s.peerURL()
	s.log = filepath.Join(s.dir, "etcd.log")
	s.start()
	t.Cleanup(s.cleanup)
	s.waitHealthy()
	return s, files
}

// tlsArgs are the server's flags for TLS to clients.
func (f *TLSFiles) tlsArgs() []string {
	return []string{"--cert-file", f.serverCert, "--key-file", f.serverKey,
		"--trusted-ca-file", f.CA, "--client-cert-auth"}
}

// clientConfig is a TLS client configuration with the client certificate.
func (f *TLSFiles) clientConfig() (*tls.Config, error) {
	ca, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// makeCerts writes a CA, a server certificate for 127.0.0.1 and a client
// certificate, all signed by the CA, into dir.
func makeCerts(t testing.TB, dir string) TLSFiles {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	now := time.Now()
	caKey := newKey()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "memfs test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	var f TLSFiles
	f.CA = write("ca.pem", "CERTIFICATE", caDER)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) (certPath, keyPath string) {
		k := newKey()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: ips,
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(cn+".pem", "CERTIFICATE", der), write(cn+"-key.pem", "EC PRIVATE KEY", kder)
	}
	f.serverCert, f.serverKey = leaf(2, "server", x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	f.ClientCert, f.ClientKey = leaf(3, "client", x509.ExtKeyUsageClientAuth, nil)
	return f
}
