// Package pki makes the small certificate authority a class cluster needs:
// one CA, a server certificate for the etcd members and client
// certificates, written as PEM files etcd and etcdctl read.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Validity is how long generated certificates last: a term, with margin.
const Validity = 365 * 24 * time.Hour

// CA is a certificate authority that can issue certificates.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	PEM  []byte // the CA certificate, for --cacert
}

// Pair is an issued certificate and its private key, both PEM.
type Pair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// NewCA creates a CA named name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("new CA: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"playground class"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(Validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("new CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("new CA: %w", err)
	}
	return &CA{Cert: cert, key: key, PEM: pemBlock("CERTIFICATE", der)}, nil
}

// Server issues a certificate for the given host names and IP addresses,
// good for both server and client use (etcd members use theirs for both).
func (ca *CA) Server(name string, hosts []string) (Pair, error) {
	tmpl := ca.template(name, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	if len(hosts) == 0 {
		return Pair{}, errors.New("server certificate: no host names")
	}
	return ca.issue(tmpl)
}

// Client issues a client certificate whose common name is user.
func (ca *CA) Client(user string) (Pair, error) {
	return ca.issue(ca.template(user, x509.ExtKeyUsageClientAuth))
}

func (ca *CA) template(cn string, usage ...x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"playground class"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(Validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  usage,
	}
}

func (ca *CA) issue(tmpl *x509.Certificate) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("issue %s: %w", tmpl.Subject.CommonName, err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return Pair{}, fmt.Errorf("issue %s: %w", tmpl.Subject.CommonName, err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Pair{}, fmt.Errorf("issue %s: %w", tmpl.Subject.CommonName, err)
	}
	return Pair{CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("EC PRIVATE KEY", kder)}, nil
}

// Write stores the pair as dir/name.crt and dir/name.key (the key readable
// by its owner only) and returns the two paths.
func (p Pair) Write(dir, name string) (certPath, keyPath string, err error) {
	certPath = filepath.Join(dir, name+".crt")
	keyPath = filepath.Join(dir, name+".key")
	if err := os.WriteFile(certPath, p.CertPEM, 0o644); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyPath, p.KeyPEM, 0o600); err != nil {
		return "", "", err
	}
	return certPath, keyPath, nil
}

// WriteCert stores the CA certificate (not its key) as dir/ca.crt.
func (ca *CA) WriteCert(dir string) (string, error) {
	p := filepath.Join(dir, "ca.crt")
	return p, os.WriteFile(p, ca.PEM, 0o644)
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		// crypto/rand does not fail on supported platforms.
		panic(fmt.Sprintf("pki: random serial: %v", err))
	}
	return n
}
