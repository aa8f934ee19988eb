package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// With tls.cert_file and tls.key_file the hub serves HTTPS, a client negotiates HTTP/2 through ALPN, and SSE works
// over it; hub healthcheck finds it on its own. With h2c a client speaks HTTP/2 in clear (prior knowledge), as a
// proxy would, and HTTP/1.1 still works.
func TestHTTP2(t *testing.T) {
	rs := rig.StartRedis(t)
	t.Run("tls", func(t *testing.T) {
		certFile, keyFile, pool := selfSigned(t)
		prefix := fmt.Sprintf("h%d", time.Now().UnixNano())
		h := hubtest.RunDeployed(t, map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": prefix,
			"HUB_TLS_CERT_FILE": certFile, "HUB_TLS_KEY_FILE": keyFile})
		if !strings.HasPrefix(h.URL, "https://") {
			t.Fatalf("hub listens on %s, want https://", h.URL)
		}
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
		defer client.CloseIdleConnections()
		streamOverHTTP2(t, client, h.URL, rs, prefix)

		addr := strings.TrimPrefix(h.URL, "https://")
		env := map[string]string{"HUB_LISTEN": addr, "HUB_TLS_CERT_FILE": certFile, "HUB_TLS_KEY_FILE": keyFile}
		if err := hubtest.Run(context.Background(), []string{"healthcheck"}, func(k string) string { return env[k] },
			strings.NewReader(""), io.Discard, io.Discard, nil); err != nil {
			t.Errorf("hub healthcheck (HUB_LISTEN=%s, TLS) = %v, want nil", addr, err)
		}
	})
	t.Run("h2c", func(t *testing.T) {
		prefix := fmt.Sprintf("h%d", time.Now().UnixNano())
		h := hubtest.RunDeployed(t, map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": prefix, "HUB_H2C": "true"})
		tr := &http.Transport{Protocols: new(http.Protocols)}
		tr.Protocols.SetUnencryptedHTTP2(true)
		client := &http.Client{Transport: tr}
		defer client.CloseIdleConnections()
		streamOverHTTP2(t, client, h.URL, rs, prefix)

		resp, err := http.Get(h.URL + "/healthz")
		if err != nil || resp.ProtoMajor != 1 || resp.StatusCode != http.StatusOK {
			t.Errorf("GET /healthz over HTTP/1.1 with h2c on = %v, %v", resp, err)
		}
		if err == nil {
			resp.Body.Close()
		}
	})
}

// streamOverHTTP2 opens two streams on one connection with client, which must speak HTTP/2, and checks an event
// reaches both.
func streamOverHTTP2(t *testing.T, client *http.Client, base string, rs *rig.Redis, prefix string) {
	t.Helper()
	// From the start of the (empty) topic: an event published while the hub subscribes is replayed, not skipped.
	a := openSSEClient(t, client, base+"/events?topic=h2&last_event_id=0-0")
	b := openSSEClient(t, client, base+"/events?topic=h2&last_event_id=0-0")
	if a.Proto != "HTTP/2.0" || b.Proto != "HTTP/2.0" {
		t.Fatalf("GET /events went over %s and %s, want HTTP/2.0", a.Proto, b.Proto)
	}
	id, err := pubsub.NewPublisher(rs.Client(), pubsub.PublisherConfig{Prefix: prefix}).
		Publish(context.Background(), "h2", "progress", []byte(hubtest.EventData(7)))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*rig.Stream{a, b} {
		if f := s.NextEvent(5 * time.Second); f.ID != id || f.Data != hubtest.EventData(7) {
			t.Errorf("event over HTTP/2 = %+v, want id %s data %s", f, id, hubtest.EventData(7))
		}
	}
}

func openSSEClient(t testing.TB, client *http.Client, url string) *rig.Stream {
	t.Helper()
	c := rig.GetStream(t, client, url, nil)
	if c.Status != http.StatusOK {
		t.Fatalf("GET %s = %d %s", url, c.Status, c.Body)
	}
	return c
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns their paths and a pool that trusts it.
func selfSigned(t testing.TB) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hub test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
