package app

import (
	"io"
	"net"

	"github.com/syncverse/hub/internal/config"
)

// openableURL is a URL of the hub a user on this machine can open: the bound address, with a wildcard host (0.0.0.0,
// ::, or none) replaced by 127.0.0.1, since http://[::]:8080 opens nowhere.
func openableURL(scheme string, addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + "://" + addr.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// logListening writes the line that says the hub listens, on stdout for a parent that started it on :0 and waits for
// it, as a log line like every other (level, time): url is the URL to open, listen the address as configured, addr
// the one bound. It is written whatever log.level says, in log.format. It returns url.
func logListening(stdout io.Writer, cfg config.Config, scheme string, addr net.Addr) string {
	url := openableURL(scheme, addr)
	log := newLogger(config.LogConfig{Level: "info", Format: cfg.Log.Format}, stdout)
	log.Info().Str("url", url).Str("listen", cfg.Listen).Str("addr", addr.String()).Msg("hub listening")
	return url
}
