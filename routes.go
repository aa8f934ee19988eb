package main

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/syncverse/hub/web"
)

// routes lists every route of the hub in one place. /events gets no gzip or timeout middleware: it is a stream.
func routes(a *api) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = jsonErrors
	e.GET("/events", echo.WrapHandler(a.events))
	e.POST("/publish", a.publish)
	e.GET("/topics", a.topics)
	e.GET("/topics/:topic/history", a.history)
	e.GET("/topics/:topic/snapshot", a.snapshot)
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{Registry: a.reg})))
	e.GET("/healthz", a.healthz)
	e.GET("/readyz", a.readyz)
	e.GET("/*", echo.WrapHandler(web.Handler()))
	return e
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
