package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// ApplyEnv sets every key from its HUB_* variable (redis.url from HUB_REDIS_URL, sse.client_buffer from
// HUB_SSE_CLIENT_BUFFER, ...) and reports every bad value at once.
func ApplyEnv(cfg *Config, getenv func(string) string) error {
	var errs []error
	walk(reflect.ValueOf(cfg).Elem(), "HUB", func(name string, v reflect.Value) {
		raw := getenv(name)
		if raw == "" {
			return
		}
		if err := setValue(v, raw); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", name, raw, err))
		}
	})
	return errors.Join(errs...)
}

// EnvNames lists every HUB_* variable the configuration reads.
func EnvNames() []string {
	var names []string
	walk(reflect.ValueOf(&Config{}).Elem(), "HUB", func(name string, _ reflect.Value) { names = append(names, name) })
	return names
}

func walk(v reflect.Value, prefix string, fn func(name string, v reflect.Value)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		name := prefix + "_" + strings.ToUpper(tag)
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			walk(f, name, fn)
			continue
		}
		fn(name, f)
	}
}

func setValue(v reflect.Value, raw string) error {
	switch {
	case v.Type() == reflect.TypeOf(time.Duration(0)):
		d, err := time.ParseDuration(raw)
		if err != nil {
			return err
		}
		v.SetInt(int64(d))
	case v.Kind() == reflect.String:
		v.SetString(raw)
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(&b))
	case v.Kind() == reflect.Float64:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return errors.New("not a number")
		}
		v.SetFloat(f)
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return errors.New("not a whole number")
		}
		v.SetInt(n)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		parts := strings.Split(raw, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		v.Set(reflect.ValueOf(parts))
	default:
		return fmt.Errorf("unsupported setting type %s", v.Type())
	}
	return nil
}
