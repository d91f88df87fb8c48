package jshost

import (
	"io"
	"math"
	"strings"
	"time"
)

func (w *world) init() {
	w.global = NewObject()
	w.goObj = NewObject()
	w.goObj.Set("_pendingEvent", Null)
	w.goObj.Set("_makeFuncWrapper", native("_makeFuncWrapper", func(_ Value, args []Value) (Value, error) {
		n := toNumber(arg(args, 0))
		if n < 0 || n > math.MaxUint32 || n != math.Trunc(n) {
			return nil, throwf("TypeError", "bad function id")
		}
		return w.wrap(uint32(n)), nil
	}))

	g := w.global
	g.Set("globalThis", g)
	w.initObject()
	w.initArray()
	w.initFunction()
	w.initErrors()
	w.initPromise()
	w.initUint8Array()
	w.initDate()
	w.initJSON()
	w.initReflect()
	w.initConsole()
	w.initNode()
	w.initTimers()
}

func (w *world) initObject() {
	w.ctorObject = &Function{Name: "Object", instance: isObject}
	w.ctorObject.call = func(_ Value, args []Value) (Value, error) {
		if v := arg(args, 0); isObject(v) {
			return v, nil
		}
		return NewObject(), nil
	}
	w.ctorObject.construct = func(args []Value) (Value, error) { return w.ctorObject.call(Undefined, args) }
	w.ctorObject.Set("keys", native("keys", func(_ Value, args []Value) (Value, error) {
		v := arg(args, 0)
		a := &Array{}
		switch x := v.(type) {
		case *Array:
			for i := range x.Elems {
				a.Elems = append(a.Elems, formatNumber(float64(i)))
			}
		case *Uint8Array:
			for i := range x.Bytes {
				a.Elems = append(a.Elems, formatNumber(float64(i)))
			}
		}
		if b := bagOf(v); b != nil {
			for _, k := range b.keys {
				a.Elems = append(a.Elems, k)
			}
		} else if !isObject(v) {
			if _, ok := v.(string); !ok {
				return nil, throwf("TypeError", "Cannot convert %s to object", toString(v))
			}
		}
		return a, nil
	}))
	w.ctorObject.Set("assign", native("assign", func(_ Value, args []Value) (Value, error) {
		t := arg(args, 0)
		if !isObject(t) {
			return nil, throwf("TypeError", "Cannot convert %s to object", toString(t))
		}
		for _, s := range args[1:] {
			if b := bagOf(s); b != nil {
				for _, k := range b.keys {
					w.set(t, k, b.m[k])
				}
			}
		}
		return t, nil
	}))
	w.ctorObject.Set("freeze", native("freeze", func(_ Value, args []Value) (Value, error) {
		v := arg(args, 0)
		if b := bagOf(v); b != nil {
			b.frozen = true
		}
		return v, nil
	}))
	w.ctorObject.Set("isFrozen", native("isFrozen", func(_ Value, args []Value) (Value, error) {
		b := bagOf(arg(args, 0))
		return b == nil || b.frozen, nil
	}))
	w.protoObject = map[string]*Function{
		"hasOwnProperty": native("hasOwnProperty", func(this Value, args []Value) (Value, error) {
			k := toString(arg(args, 0))
			if b := bagOf(this); b != nil {
				if _, ok := b.getOwn(k); ok {
					return true, nil
				}
			}
			if i, ok := arrayIndex(k); ok {
				switch x := this.(type) {
				case *Array:
					return i < len(x.Elems), nil
				case *Uint8Array:
					return i < len(x.Bytes), nil
				}
			}
			return false, nil
		}),
		"toString": native("toString", func(this Value, _ []Value) (Value, error) { return toString(this), nil }),
		"valueOf":  native("valueOf", func(this Value, _ []Value) (Value, error) { return this, nil }),
	}
	w.global.Set("Object", w.ctorObject)
}

func (w *world) initArray() {
	isArray := func(v Value) bool { _, ok := v.(*Array); return ok }
	w.ctorArray = &Function{Name: "Array", instance: isArray}
	w.ctorArray.call = func(_ Value, args []Value) (Value, error) {
		if len(args) == 1 {
			if n, ok := args[0].(float64); ok {
				if n < 0 || n > maxArrayLength || n != math.Trunc(n) {
					return nil, throwf("RangeError", "Invalid array length")
				}
				a := &Array{Elems: make([]Value, int(n))}
				for i := range a.Elems {
					a.Elems[i] = Undefined
				}
				return a, nil
			}
		}
		return &Array{Elems: append([]Value{}, args...)}, nil
	}
	w.ctorArray.construct = func(args []Value) (Value, error) { return w.ctorArray.call(Undefined, args) }
	w.ctorArray.Set("isArray", native("isArray", func(_ Value, args []Value) (Value, error) {
		return isArray(arg(args, 0)), nil
	}))
	w.ctorArray.Set("of", native("of", func(_ Value, args []Value) (Value, error) {
		return &Array{Elems: append([]Value{}, args...)}, nil
	}))
	w.ctorArray.Set("from", native("from", func(_ Value, args []Value) (Value, error) {
		switch x := arg(args, 0).(type) {
		case *Array:
			return &Array{Elems: append([]Value{}, x.Elems...)}, nil
		case *Uint8Array:
			a := &Array{Elems: make([]Value, len(x.Bytes))}
			for i, b := range x.Bytes {
				a.Elems[i] = float64(b)
			}
			return a, nil
		}
		return &Array{}, nil
	}))
	w.protoArray = map[string]*Function{
		"push": native("push", func(this Value, args []Value) (Value, error) {
			a, ok := this.(*Array)
			if !ok {
				return nil, throwf("TypeError", "push called on a non-array")
			}
			if len(a.Elems)+len(args) > maxArrayLength {
				return nil, throwf("RangeError", "Invalid array length")
			}
			a.Elems = append(a.Elems, args...)
			return float64(len(a.Elems)), nil
		}),
		"join": native("join", func(this Value, args []Value) (Value, error) {
			a, ok := this.(*Array)
			if !ok {
				return "", nil
			}
			sep := ","
			if s, ok := arg(args, 0).(string); ok {
				sep = s
			}
			parts := make([]string, len(a.Elems))
			for i, e := range a.Elems {
				switch e.(type) {
				case undefinedType, nullType:
				default:
					parts[i] = toString(e)
				}
			}
			return strings.Join(parts, sep), nil
		}),
		"indexOf": native("indexOf", func(this Value, args []Value) (Value, error) {
			if a, ok := this.(*Array); ok {
				for i, e := range a.Elems {
					if e == arg(args, 0) {
						return float64(i), nil
					}
				}
			}
			return float64(-1), nil
		}),
		"slice": native("slice", func(this Value, args []Value) (Value, error) {
			a, ok := this.(*Array)
			if !ok {
				return &Array{}, nil
			}
			s, e := sliceBounds(len(a.Elems), args)
			return &Array{Elems: append([]Value{}, a.Elems[s:e]...)}, nil
		}),
	}
	w.global.Set("Array", w.ctorArray)
}

// sliceBounds resolves the (start, end) arguments of slice and subarray.
func sliceBounds(n int, args []Value) (int, int) {
	idx := func(v Value, def int) int {
		if _, ok := v.(undefinedType); ok {
			return def
		}
		f := math.Trunc(toNumber(v))
		switch {
		case math.IsNaN(f):
			return 0
		case f < 0:
			f += float64(n)
			if f < 0 {
				f = 0
			}
		case f > float64(n):
			f = float64(n)
		}
		return int(f)
	}
	s, e := idx(arg(args, 0), 0), idx(arg(args, 1), n)
	if e < s {
		e = s
	}
	return s, e
}

func (w *world) initFunction() {
	w.ctorFunction = &Function{Name: "Function", instance: func(v Value) bool { _, ok := v.(*Function); return ok }}
	w.ctorFunction.call = func(Value, []Value) (Value, error) {
		return nil, throwf("EvalError", "code generation from strings is not supported")
	}
	w.protoFunction = map[string]*Function{
		"call": native("call", func(this Value, args []Value) (Value, error) {
			var rest []Value
			if len(args) > 1 {
				rest = args[1:]
			}
			return w.call(this, arg(args, 0), rest)
		}),
		"apply": native("apply", func(this Value, args []Value) (Value, error) {
			var rest []Value
			if a, ok := arg(args, 1).(*Array); ok {
				rest = append(rest, a.Elems...)
			}
			return w.call(this, arg(args, 0), rest)
		}),
		"bind": native("bind", func(this Value, args []Value) (Value, error) {
			target, ok := this.(*Function)
			if !ok || target.call == nil {
				return nil, throwf("TypeError", "Bind must be called on a function")
			}
			boundThis := arg(args, 0)
			var bound []Value
			if len(args) > 1 {
				bound = append(bound, args[1:]...)
			}
			return &Function{Name: "bound " + target.Name, call: func(_ Value, more []Value) (Value, error) {
				return target.call(boundThis, append(append([]Value(nil), bound...), more...))
			}}, nil
		}),
	}
	w.global.Set("Function", w.ctorFunction)
	w.global.Set("String", &Function{Name: "String",
		instance: func(Value) bool { return false },
		call: func(_ Value, args []Value) (Value, error) {
			if len(args) == 0 {
				return "", nil
			}
			return toString(args[0]), nil
		}})
	w.global.Set("Number", &Function{Name: "Number",
		instance: func(Value) bool { return false },
		call: func(_ Value, args []Value) (Value, error) {
			if len(args) == 0 {
				return float64(0), nil
			}
			return toNumber(args[0]), nil
		}})
	w.global.Set("Boolean", &Function{Name: "Boolean",
		instance: func(Value) bool { return false },
		call:     func(_ Value, args []Value) (Value, error) { return truthy(arg(args, 0)), nil }})
}

// truthy is JavaScript's Boolean(v).
func truthy(v Value) bool {
	switch x := v.(type) {
	case undefinedType, nullType:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

func (w *world) initErrors() {
	for _, class := range []string{"Error", "TypeError", "RangeError", "SyntaxError", "EvalError"} {
		class := class
		ctor := &Function{Name: class}
		if class == "Error" {
			ctor.instance = func(v Value) bool { o, ok := v.(*Object); return ok && o.IsError() }
		} else {
			ctor.instance = func(v Value) bool { o, ok := v.(*Object); return ok && o.Class == class }
		}
		ctor.call = func(_ Value, args []Value) (Value, error) {
			o := &Object{Class: class}
			o.Set("name", class)
			msg := ""
			if m := arg(args, 0); m != Undefined {
				msg = toString(m)
			}
			o.Set("message", msg)
			if opts, ok := arg(args, 1).(*Object); ok {
				if c, ok := opts.getOwn("cause"); ok {
					o.Set("cause", c)
				}
			}
			o.Set("stack", toString(o))
			return o, nil
		}
		ctor.construct = func(args []Value) (Value, error) { return ctor.call(Undefined, args) }
		w.global.Set(class, ctor)
	}
	w.protoError = map[string]*Function{
		"toString": native("toString", func(this Value, _ []Value) (Value, error) { return toString(this), nil }),
	}
}

func (w *world) initUint8Array() {
	w.ctorUint8 = &Function{Name: "Uint8Array", instance: func(v Value) bool { _, ok := v.(*Uint8Array); return ok }}
	w.ctorUint8.call = func(Value, []Value) (Value, error) {
		return nil, throwf("TypeError", "Constructor Uint8Array requires 'new'")
	}
	w.ctorUint8.construct = func(args []Value) (Value, error) {
		switch x := arg(args, 0).(type) {
		case undefinedType:
			return &Uint8Array{Bytes: []byte{}}, nil
		case float64:
			if x < 0 || x > 1<<31 || x != math.Trunc(x) {
				return nil, throwf("RangeError", "Invalid typed array length: %s", formatNumber(x))
			}
			return &Uint8Array{Bytes: make([]byte, int(x))}, nil
		case *Uint8Array:
			return &Uint8Array{Bytes: append([]byte{}, x.Bytes...)}, nil
		case *Array:
			b := make([]byte, len(x.Elems))
			for i, e := range x.Elems {
				b[i] = byte(int64(toNumber(e)))
			}
			return &Uint8Array{Bytes: b}, nil
		}
		return &Uint8Array{Bytes: []byte{}}, nil
	}
	w.protoUint8 = map[string]*Function{
		"subarray": native("subarray", func(this Value, args []Value) (Value, error) {
			u, ok := this.(*Uint8Array)
			if !ok {
				return nil, throwf("TypeError", "subarray called on a non-Uint8Array")
			}
			s, e := sliceBounds(len(u.Bytes), args)
			return &Uint8Array{Bytes: u.Bytes[s:e:e]}, nil
		}),
		"slice": native("slice", func(this Value, args []Value) (Value, error) {
			u, ok := this.(*Uint8Array)
			if !ok {
				return nil, throwf("TypeError", "slice called on a non-Uint8Array")
			}
			s, e := sliceBounds(len(u.Bytes), args)
			return &Uint8Array{Bytes: append([]byte{}, u.Bytes[s:e]...)}, nil
		}),
	}
	w.global.Set("Uint8Array", w.ctorUint8)
}

func (w *world) initDate() {
	nowMS := func() float64 { return float64(time.Now().UnixNano() / 1e6) }
	w.ctorDate = &Function{Name: "Date", instance: func(v Value) bool { o, ok := v.(*Object); return ok && o.Class == "Date" }}
	w.ctorDate.call = func(Value, []Value) (Value, error) { return dateString(nowMS()), nil }
	w.ctorDate.construct = func(args []Value) (Value, error) {
		d := &Object{Class: "Date", date: nowMS()}
		if n, ok := arg(args, 0).(float64); ok {
			d.date = n
		}
		return d, nil
	}
	w.ctorDate.Set("now", native("now", func(Value, []Value) (Value, error) { return nowMS(), nil }))
	dateOf := func(this Value) float64 {
		if o, ok := this.(*Object); ok && o.Class == "Date" {
			return o.date
		}
		return math.NaN()
	}
	w.protoDate = map[string]*Function{
		"getTime": native("getTime", func(this Value, _ []Value) (Value, error) { return dateOf(this), nil }),
		"valueOf": native("valueOf", func(this Value, _ []Value) (Value, error) { return dateOf(this), nil }),
		"getTimezoneOffset": native("getTimezoneOffset", func(this Value, _ []Value) (Value, error) {
			ms := dateOf(this)
			if math.IsNaN(ms) {
				return ms, nil
			}
			_, off := time.UnixMilli(int64(ms)).Zone()
			return float64(-off / 60), nil
		}),
		"toISOString": native("toISOString", func(this Value, _ []Value) (Value, error) {
			ms := dateOf(this)
			if math.IsNaN(ms) {
				return nil, throwf("RangeError", "Invalid time value")
			}
			return time.UnixMilli(int64(ms)).UTC().Format("2006-01-02T15:04:05.000Z"), nil
		}),
		"toString": native("toString", func(this Value, _ []Value) (Value, error) { return dateString(dateOf(this)), nil }),
	}
	w.global.Set("Date", w.ctorDate)
}

func dateString(ms float64) string {
	if math.IsNaN(ms) {
		return "Invalid Date"
	}
	return time.UnixMilli(int64(ms)).Format("Mon Jan 02 2006 15:04:05 GMT-0700")
}

func (w *world) initConsole() {
	c := NewObject()
	printer := func(name string, out func() io.Writer) {
		c.Set(name, native(name, func(_ Value, args []Value) (Value, error) {
			parts := make([]string, len(args))
			for i, a := range args {
				parts[i] = toString(a)
			}
			io.WriteString(out(), strings.Join(parts, " ")+"\n")
			return Undefined, nil
		}))
	}
	stdout := func() io.Writer { return w.stdout }
	stderr := func() io.Writer { return w.stderr }
	printer("log", stdout)
	printer("info", stdout)
	printer("debug", stdout)
	printer("warn", stderr)
	printer("error", stderr)
	w.global.Set("console", c)
}

func (w *world) initTimers() {
	w.global.Set("setTimeout", native("setTimeout", func(_ Value, args []Value) (Value, error) {
		f := arg(args, 0)
		if _, ok := f.(*Function); !ok {
			return nil, throwf("TypeError", "setTimeout callback must be a function")
		}
		ms := toNumber(arg(args, 1))
		if math.IsNaN(ms) || ms < 0 {
			ms = 0
		}
		if ms > 1<<31 {
			ms = 1 << 31
		}
		var rest []Value
		if len(args) > 2 {
			rest = append(rest, args[2:]...)
		}
		id := w.setTimer(time.Duration(ms*float64(time.Millisecond)), func() {
			w.call(f, Undefined, rest) // an exception in a timer is dropped, as an uncaught one would be
		})
		return float64(id), nil
	}))
	w.global.Set("clearTimeout", native("clearTimeout", func(_ Value, args []Value) (Value, error) {
		w.clearTimer(int64(toNumber(arg(args, 0))))
		return Undefined, nil
	}))
	w.global.Set("queueMicrotask", native("queueMicrotask", func(_ Value, args []Value) (Value, error) {
		f := arg(args, 0)
		if _, ok := f.(*Function); !ok {
			return nil, throwf("TypeError", "queueMicrotask callback must be a function")
		}
		w.enqueue(func() { w.call(f, Undefined, nil) })
		return Undefined, nil
	}))
}

// propertyKey converts a property key as JavaScript does (numbers to
// their string form).
func propertyKey(v Value) string {
	if f, ok := v.(float64); ok {
		return formatNumber(f)
	}
	return toString(v)
}

func (w *world) initReflect() {
	r := NewObject()
	needObject := func(name string, v Value) error {
		if !isObject(v) {
			return throwf("TypeError", "Reflect.%s called on non-object", name)
		}
		return nil
	}
	r.Set("get", native("get", func(_ Value, args []Value) (Value, error) {
		t := arg(args, 0)
		if err := needObject("get", t); err != nil {
			return nil, err
		}
		return w.get(t, propertyKey(arg(args, 1))), nil
	}))
	r.Set("set", native("set", func(_ Value, args []Value) (Value, error) {
		t := arg(args, 0)
		if err := needObject("set", t); err != nil {
			return nil, err
		}
		w.set(t, propertyKey(arg(args, 1)), arg(args, 2))
		return true, nil
	}))
	r.Set("has", native("has", func(_ Value, args []Value) (Value, error) {
		t := arg(args, 0)
		if err := needObject("has", t); err != nil {
			return nil, err
		}
		k := propertyKey(arg(args, 1))
		if b := bagOf(t); b != nil {
			if _, ok := b.getOwn(k); ok {
				return true, nil
			}
		}
		return w.get(t, k) != Undefined, nil
	}))
	r.Set("deleteProperty", native("deleteProperty", func(_ Value, args []Value) (Value, error) {
		t := arg(args, 0)
		if err := needObject("deleteProperty", t); err != nil {
			return nil, err
		}
		w.del(t, propertyKey(arg(args, 1)))
		return true, nil
	}))
	r.Set("ownKeys", native("ownKeys", func(_ Value, args []Value) (Value, error) {
		t := arg(args, 0)
		if err := needObject("ownKeys", t); err != nil {
			return nil, err
		}
		keys, _ := w.ctorObject.Get("keys").(*Function).call(Undefined, []Value{t})
		return keys, nil
	}))
	r.Set("apply", native("apply", func(_ Value, args []Value) (Value, error) {
		var list []Value
		if a, ok := arg(args, 2).(*Array); ok {
			list = append(list, a.Elems...)
		}
		return w.call(arg(args, 0), arg(args, 1), list)
	}))
	r.Set("construct", native("construct", func(_ Value, args []Value) (Value, error) {
		var list []Value
		if a, ok := arg(args, 1).(*Array); ok {
			list = append(list, a.Elems...)
		}
		return w.construct(arg(args, 0), list)
	}))
	w.global.Set("Reflect", r)
}
