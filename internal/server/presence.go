package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/syncverse/hub/hub"
)

// PresenceReader answers a topic's watchers across every hub (hub.Presence).
type PresenceReader interface {
	Total(ctx context.Context, topic string) (hub.Total, error)
}

// countedPresence is GET /topics/{topic}/presence for a viewer who may not see who watches: the count only.
type countedPresence struct {
	Topic string `json:"topic"`
	Count int    `json:"count"`
	Hubs  int    `json:"hubs"`
}

// presence answers who watches a topic across every hub. The route's middleware has checked the subscribe grant;
// the users are shown only to a viewer whose presence grant covers the topic.
func (a *api) presence(c echo.Context) error {
	topic := pathTopic(c)
	if err := hub.ValidateTopic(topic); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	if a.presenceOf == nil {
		return echo.NewHTTPError(http.StatusNotFound, "presence is off on this hub (presence.enabled)")
	}
	tot, err := a.presenceOf.Total(c.Request().Context(), topic)
	if err != nil {
		return a.redisUnavailable(c, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	if !identity(c).Grant.CanSeePresence(topic) {
		return c.JSON(http.StatusOK, countedPresence{Topic: tot.Topic, Count: tot.Count, Hubs: tot.Hubs})
	}
	return c.JSON(http.StatusOK, tot)
}
