package main

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/syncverse/hub/web"
)

// routes lists every route of the hub in one place. /events gets no gzip or timeout middleware: it is a stream.
// Probes and the console's static files are open; everything that shows or changes events needs credentials (the
// /events handler checks them itself, through sse.Config.Authorize, once it knows the topics).
func routes(a *api) *echo.Echo {
	sec := a.sec
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = jsonErrors
	e.Pre(sec.crossOrigin)
	e.GET("/events", echo.WrapHandler(a.events), forgetRequest, sec.limitStreams)
	e.POST("/publish", a.publish, sec.authenticate, sec.limitPublish)
	e.GET("/topics", a.topics, sec.authenticate)
	e.GET("/topics/:topic/history", a.history, sec.authenticate, sec.topicParam)
	e.GET("/topics/:topic/snapshot", a.snapshot, sec.authenticate, sec.topicParam)
	if a.cfg.Metrics.Listen == "" {
		e.GET("/metrics", echo.WrapHandler(metricsHandler(a.reg)), sec.authenticate)
	}
	e.GET("/healthz", a.healthz)
	e.GET("/readyz", a.readyz)
	e.GET("/*", echo.WrapHandler(web.Handler()))
	return e
}

// forgetRequest drops echo's hold on an /events request once its handler has returned. Echo pools its contexts,
// and a pooled context keeps its last request and response until it is reused; for a stream that outlives its
// handler (HTTP/1.1, see sse), they still reach the hijacked connection's net/http buffers: 3 KiB per idle stream.
func forgetRequest(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err == nil {
			c.Reset(nil, nil)
		}
		return err
	}
}

func metricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}

// jsonErrors answers every error with the contract's {"error": "..."} body and the error's status.
func jsonErrors(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, msg := http.StatusInternalServerError, "internal error"
	var he *echo.HTTPError
	if errors.As(err, &he) {
		status = he.Code
		if m, ok := he.Message.(string); ok {
			msg = m
		} else {
			msg = http.StatusText(status)
		}
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.JSON(status, map[string]string{"error": msg})
}
