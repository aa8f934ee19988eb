package server

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"

	"github.com/syncverse/hub/internal/config"
)

// ConfigureHTTP prepares srv for the protocols the configuration asks for and returns how to serve a listener and
// the URL scheme clients use. Browsers open at most six HTTP/1.1 connections per host, and each EventSource holds
// one; over HTTP/2 every stream shares one connection, so a console with many tabs keeps working. Browsers speak
// HTTP/2 only over TLS; h2c is for a proxy in front that terminates TLS and speaks HTTP/2 to the hub.
func ConfigureHTTP(srv *http.Server, cfg config.Config) (serve func(net.Listener) error, scheme string, err error) {
	if cfg.TLS.CertFile != "" {
		// Loaded now rather than at the first handshake, so a bad file stops the start with a clear error.
		cert, err := tls.LoadX509KeyPair(cfg.TLS.CertFile, cfg.TLS.KeyFile)
		if err != nil {
			return nil, "", fmt.Errorf("tls.cert_file, tls.key_file: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		// ServeTLS, unlike Serve on a TLS listener, offers h2 through ALPN.
		return func(ln net.Listener) error { return srv.ServeTLS(ln, "", "") }, "https", nil
	}
	if cfg.H2C {
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	return srv.Serve, "http", nil
}
