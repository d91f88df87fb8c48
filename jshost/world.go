package jshost

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// world is the JavaScript-like object world of one Instance: its globals,
// the prototype methods of each kind of object, and the microtask queue.
// It is used only from the instance's event loop.
type world struct {
	global *Object
	goObj  *Object // the object wasm_exec.js calls "this" (reference 6)

	microtasks []func()

	stdout, stderr io.Writer

	protoObject, protoArray, protoFunction, protoUint8,
	protoPromise, protoError, protoDate map[string]*Function

	ctorObject, ctorArray, ctorFunction, ctorUint8,
	ctorPromise, ctorDate *Function

	// Hooks the Instance provides.
	wrap       func(id uint32) *Function // _makeFuncWrapper
	setTimer   func(delay time.Duration, fire func()) int64
	clearTimer func(id int64)
}

// native returns a built-in function.
func native(name string, call func(this Value, args []Value) (Value, error)) *Function {
	return &Function{Name: name, call: call}
}

func arg(args []Value, i int) Value {
	if i < len(args) {
		return args[i]
	}
	return Undefined
}

// Exception is a JavaScript value thrown to Go: by a function the host
// called, or as the reason a Promise was rejected.
//
// Name, Message, Code and Index are copied from Value when it is an
// object with those properties (Code empty and Index -1 when absent);
// for any other thrown value, Message is its string form.
type Exception struct {
	Value   Value
	Name    string
	Message string
	Code    string
	Index   int
}

// Error returns "Name: Message", with " [Code]" and " (index N)" when set.
func (e *Exception) Error() string {
	s := e.Message
	if e.Name != "" {
		s = e.Name + ": " + s
	}
	if e.Code != "" {
		s += " [" + e.Code + "]"
	}
	if e.Index >= 0 {
		s += fmt.Sprintf(" (index %d)", e.Index)
	}
	return s
}

func newException(v Value) *Exception {
	e := &Exception{Value: v, Index: -1}
	o, ok := v.(*Object)
	if !ok {
		e.Message = toString(v)
		return e
	}
	if s, ok := o.Get("name").(string); ok {
		e.Name = s
	} else if o.IsError() {
		e.Name = o.Class
	}
	if s, ok := o.Get("message").(string); ok {
		e.Message = s
	}
	if s, ok := o.Get("code").(string); ok {
		e.Code = s
	}
	if f, ok := o.Get("index").(float64); ok && f >= 0 && f == math.Trunc(f) && f < 1<<31 {
		e.Index = int(f)
	}
	return e
}

// throwf returns a new error object of class as a thrown exception.
func throwf(class, format string, a ...any) error {
	return newException(newError(class, fmt.Sprintf(format, a...)))
}

// asException turns any Go error into a thrown JavaScript value.
func asException(err error) *Exception {
	var ex *Exception
	if errors.As(err, &ex) {
		return ex
	}
	return newException(newError("Error", err.Error()))
}

// guestAbort carries an error out of nested calls when the guest exits or
// traps inside a call that was made from a host function: the outer wasm
// call must stop too.
type guestAbort struct{ err error }

func (g guestAbort) Error() string { return g.err.Error() }
func (g guestAbort) Unwrap() error { return g.err }

// goFunction wraps f as a JavaScript function; see Func.
func goFunction(f Func) *Function {
	return &Function{call: func(this Value, args []Value) (res Value, err error) {
		defer func() {
			if r := recover(); r != nil {
				if g, ok := r.(guestAbort); ok {
					panic(g)
				}
				res, err = nil, throwf("Error", "jshost: Go function panicked: %v", r)
			}
		}()
		out, ferr := f(this, args)
		if ferr != nil {
			return nil, asException(ferr)
		}
		v, cerr := ToJS(out)
		if cerr != nil {
			return nil, throwf("TypeError", "%v", cerr)
		}
		return v, nil
	}}
}

// get reads v[k] like Reflect.get: own properties, then the methods of
// v's kind. Primitives other than strings have no properties here.
func (w *world) get(v Value, k string) Value {
	switch x := v.(type) {
	case string:
		if k == "length" {
			return float64(jsLength(x))
		}
		return Undefined
	case *Function:
		if k == "name" {
			if e, ok := x.getOwn(k); ok {
				return e
			}
			return x.Name
		}
	}
	if !isObject(v) {
		return Undefined
	}
	if e := getOwnOrIndex(v, k); e != Undefined {
		return e
	}
	if b := bagOf(v); b != nil {
		if _, ok := b.getOwn(k); ok { // an own property holding undefined
			return Undefined
		}
	}
	var proto map[string]*Function
	switch x := v.(type) {
	case *Object:
		switch {
		case x.IsError():
			proto = w.protoError
		case x.Class == "Date":
			proto = w.protoDate
		}
	case *Array:
		proto = w.protoArray
	case *Function:
		proto = w.protoFunction
	case *Uint8Array:
		proto = w.protoUint8
	case *Promise:
		proto = w.protoPromise
	}
	if f, ok := proto[k]; ok {
		return f
	}
	if f, ok := w.protoObject[k]; ok {
		return f
	}
	return Undefined
}

// set writes v[k] = x like Reflect.set; writes to primitives are ignored.
func (w *world) set(v Value, k string, x Value) {
	if b := bagOf(v); b != nil && b.frozen {
		return
	}
	if i, ok := arrayIndex(k); ok && setIndex(v, i, x) {
		return
	}
	if a, ok := v.(*Array); ok && k == "length" {
		n := toNumber(x)
		if n >= 0 && n <= maxArrayLength && n == math.Trunc(n) {
			l := int(n)
			for len(a.Elems) < l {
				a.Elems = append(a.Elems, Undefined)
			}
			a.Elems = a.Elems[:l]
		}
		return
	}
	if b := bagOf(v); b != nil {
		b.setOwn(k, x)
	}
}

func (w *world) del(v Value, k string) {
	if b := bagOf(v); b != nil {
		b.delOwn(k)
	}
}

// call applies f to this and args: Reflect.apply.
func (w *world) call(f Value, this Value, args []Value) (Value, error) {
	fn, ok := f.(*Function)
	if !ok || fn.call == nil {
		return nil, throwf("TypeError", "%s is not a function", typeOf(f))
	}
	return fn.call(this, args)
}

// construct is Reflect.construct.
func (w *world) construct(f Value, args []Value) (Value, error) {
	fn, ok := f.(*Function)
	if !ok || fn.construct == nil {
		return nil, throwf("TypeError", "%s is not a constructor", typeOf(f))
	}
	return fn.construct(args)
}

// instanceOf is v instanceof t.
func (w *world) instanceOf(v, t Value) bool {
	fn, ok := t.(*Function)
	if !ok || fn.instance == nil {
		return false
	}
	return fn.instance(v)
}

func (w *world) enqueue(task func()) { w.microtasks = append(w.microtasks, task) }

// drain runs microtasks until the queue is empty.
func (w *world) drain() {
	for i := 0; i < len(w.microtasks); i++ {
		t := w.microtasks[i]
		w.microtasks[i] = nil
		t()
	}
	w.microtasks = w.microtasks[:0]
}

// --- Promises ---

// settle fulfils or rejects p once.
func (w *world) settle(p *Promise, st promiseState, v Value) {
	if p.state != pending {
		return
	}
	p.state, p.value = st, v
	rs := p.reactions
	p.reactions = nil
	for _, r := range rs {
		w.enqueue(r)
	}
}

// resolvers returns the resolve and reject functions of p; only the first
// call of either has an effect.
func (w *world) resolvers(p *Promise) (resolve, reject func(Value)) {
	done := false
	resolve = func(v Value) {
		if done {
			return
		}
		done = true
		w.resolveWith(p, v)
	}
	reject = func(v Value) {
		if done {
			return
		}
		done = true
		w.settle(p, rejected, v)
	}
	return resolve, reject
}

// resolveWith resolves p with v, adopting v's state if v is a thenable.
func (w *world) resolveWith(p *Promise, v Value) {
	if v == Value(p) {
		w.settle(p, rejected, newError("TypeError", "Chaining cycle detected for promise"))
		return
	}
	if q, ok := v.(*Promise); ok {
		w.enqueue(func() {
			resolve, reject := w.resolvers(p)
			w.react(q, resolve, reject)
		})
		return
	}
	if isObject(v) {
		if then, ok := w.get(v, "then").(*Function); ok {
			w.enqueue(func() {
				resolve, reject := w.resolvers(p)
				rf, jf := w.resolverFunctions(resolve, reject)
				if _, err := w.call(then, v, []Value{rf, jf}); err != nil {
					reject(asException(err).Value)
				}
			})
			return
		}
	}
	w.settle(p, fulfilled, v)
}

func (w *world) resolverFunctions(resolve, reject func(Value)) (*Function, *Function) {
	rf := native("resolve", func(_ Value, args []Value) (Value, error) {
		resolve(arg(args, 0))
		return Undefined, nil
	})
	jf := native("reject", func(_ Value, args []Value) (Value, error) {
		reject(arg(args, 0))
		return Undefined, nil
	})
	return rf, jf
}

// react calls onFulfilled or onRejected, as a microtask, once p settles.
func (w *world) react(p *Promise, onFulfilled, onRejected func(Value)) {
	p.handled = true
	r := func() {
		if p.state == fulfilled {
			onFulfilled(p.value)
		} else {
			onRejected(p.value)
		}
	}
	if p.state == pending {
		p.reactions = append(p.reactions, r)
		return
	}
	w.enqueue(r)
}

// then is Promise.prototype.then with JavaScript handlers.
func (w *world) then(p *Promise, onF, onR Value) *Promise {
	q := &Promise{}
	handler := func(h Value, st promiseState) func(Value) {
		return func(v Value) {
			if _, ok := h.(*Function); !ok {
				w.settle(q, st, v)
				if st == fulfilled {
					return
				}
				return
			}
			res, err := w.call(h, Undefined, []Value{v})
			if err != nil {
				w.settle(q, rejected, asException(err).Value)
				return
			}
			w.resolveWith(q, res)
		}
	}
	w.react(p, handler(onF, fulfilled), handler(onR, rejected))
	return q
}

// promiseResolve is Promise.resolve.
func (w *world) promiseResolve(v Value) *Promise {
	if p, ok := v.(*Promise); ok {
		return p
	}
	p := &Promise{}
	w.resolveWith(p, v)
	return p
}

// --- the globals ---

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

func (w *world) initPromise() {
	w.ctorPromise = &Function{Name: "Promise", instance: func(v Value) bool { _, ok := v.(*Promise); return ok }}
	w.ctorPromise.call = func(Value, []Value) (Value, error) {
		return nil, throwf("TypeError", "Promise constructor cannot be invoked without 'new'")
	}
	w.ctorPromise.construct = func(args []Value) (Value, error) {
		exec, ok := arg(args, 0).(*Function)
		if !ok {
			return nil, throwf("TypeError", "Promise resolver %s is not a function", typeOf(arg(args, 0)))
		}
		p := &Promise{}
		resolve, reject := w.resolvers(p)
		rf, jf := w.resolverFunctions(resolve, reject)
		if _, err := w.call(exec, Undefined, []Value{rf, jf}); err != nil {
			reject(asException(err).Value)
		}
		return p, nil
	}
	w.ctorPromise.Set("resolve", native("resolve", func(_ Value, args []Value) (Value, error) {
		return w.promiseResolve(arg(args, 0)), nil
	}))
	w.ctorPromise.Set("reject", native("reject", func(_ Value, args []Value) (Value, error) {
		p := &Promise{}
		w.settle(p, rejected, arg(args, 0))
		return p, nil
	}))
	w.ctorPromise.Set("all", native("all", func(_ Value, args []Value) (Value, error) {
		list, ok := arg(args, 0).(*Array)
		if !ok {
			return nil, throwf("TypeError", "Promise.all expects an array")
		}
		p := &Promise{}
		out := &Array{Elems: make([]Value, len(list.Elems))}
		left := len(list.Elems)
		if left == 0 {
			w.settle(p, fulfilled, out)
			return p, nil
		}
		for i, e := range list.Elems {
			i := i
			w.react(w.promiseResolve(e), func(v Value) {
				out.Elems[i] = v
				if left--; left == 0 {
					w.settle(p, fulfilled, out)
				}
			}, func(v Value) { w.settle(p, rejected, v) })
		}
		return p, nil
	}))
	w.protoPromise = map[string]*Function{
		"then": native("then", func(this Value, args []Value) (Value, error) {
			p, ok := this.(*Promise)
			if !ok {
				return nil, throwf("TypeError", "then called on a non-promise")
			}
			return w.then(p, arg(args, 0), arg(args, 1)), nil
		}),
		"catch": native("catch", func(this Value, args []Value) (Value, error) {
			p, ok := this.(*Promise)
			if !ok {
				return nil, throwf("TypeError", "catch called on a non-promise")
			}
			return w.then(p, Undefined, arg(args, 0)), nil
		}),
		"finally": native("finally", func(this Value, args []Value) (Value, error) {
			p, ok := this.(*Promise)
			if !ok {
				return nil, throwf("TypeError", "finally called on a non-promise")
			}
			f := arg(args, 0)
			q := &Promise{}
			after := func(st promiseState) func(Value) {
				return func(v Value) {
					if _, ok := f.(*Function); ok {
						if _, err := w.call(f, Undefined, nil); err != nil {
							w.settle(q, rejected, asException(err).Value)
							return
						}
					}
					w.settle(q, st, v)
				}
			}
			w.react(p, after(fulfilled), after(rejected))
			return q, nil
		}),
	}
	w.global.Set("Promise", w.ctorPromise)
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

func enosys() *Object {
	e := newError("Error", "not implemented")
	e.Set("code", "ENOSYS")
	return e
}

// initNode installs the fs, process and path globals that Go's syscall
// and os packages read, as wasm_exec.js defines them when they are absent:
// only writes to stdout and stderr work.
func (w *world) initNode() {
	fs := NewObject()
	consts := NewObject()
	for _, k := range []string{"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_EXCL", "O_DIRECTORY"} {
		consts.Set(k, float64(-1))
	}
	fs.Set("constants", consts)
	writeSync := func(args []Value) (int, error) {
		fd := toNumber(arg(args, 0))
		buf, ok := arg(args, 1).(*Uint8Array)
		if !ok {
			return 0, throwf("TypeError", "buffer must be a Uint8Array")
		}
		var out io.Writer
		switch fd {
		case 1:
			out = w.stdout
		case 2:
			out = w.stderr
		default:
			e := newError("Error", "bad file descriptor")
			e.Set("code", "EBADF")
			return 0, newException(e)
		}
		out.Write(buf.Bytes)
		return len(buf.Bytes), nil
	}
	fs.Set("writeSync", native("writeSync", func(_ Value, args []Value) (Value, error) {
		n, err := writeSync(args)
		if err != nil {
			return nil, err
		}
		return float64(n), nil
	}))
	fs.Set("write", native("write", func(_ Value, args []Value) (Value, error) {
		// write(fd, buf, offset, length, position, callback)
		cb := arg(args, 5)
		buf, _ := arg(args, 1).(*Uint8Array)
		if buf == nil || toNumber(arg(args, 2)) != 0 || toNumber(arg(args, 3)) != float64(len(buf.Bytes)) || arg(args, 4) != Null {
			return w.call(cb, Undefined, []Value{enosys()})
		}
		n, err := writeSync(args)
		if err != nil {
			return w.call(cb, Undefined, []Value{asException(err).Value})
		}
		return w.call(cb, Undefined, []Value{Null, float64(n)})
	}))
	fs.Set("fsync", native("fsync", func(_ Value, args []Value) (Value, error) {
		return w.call(arg(args, 1), Undefined, []Value{Null})
	}))
	for _, name := range []string{"chmod", "chown", "close", "fchmod", "fchown", "fstat", "ftruncate",
		"lchown", "link", "lstat", "mkdir", "open", "read", "readdir", "readlink", "rename", "rmdir",
		"stat", "symlink", "truncate", "unlink", "utimes"} {
		fs.Set(name, native(name, func(_ Value, args []Value) (Value, error) {
			if len(args) == 0 {
				return nil, newException(enosys())
			}
			return w.call(args[len(args)-1], Undefined, []Value{enosys()})
		}))
	}
	w.global.Set("fs", fs)

	proc := NewObject()
	for _, name := range []string{"getuid", "getgid", "geteuid", "getegid"} {
		proc.Set(name, native(name, func(Value, []Value) (Value, error) { return float64(-1), nil }))
	}
	for _, name := range []string{"getgroups", "umask", "cwd", "chdir"} {
		proc.Set(name, native(name, func(Value, []Value) (Value, error) { return nil, newException(enosys()) }))
	}
	proc.Set("pid", float64(-1))
	proc.Set("ppid", float64(-1))
	w.global.Set("process", proc)

	path := NewObject()
	path.Set("resolve", native("resolve", func(_ Value, args []Value) (Value, error) {
		parts := make([]string, len(args))
		for i, a := range args {
			parts[i] = toString(a)
		}
		return strings.Join(parts, "/"), nil
	}))
	w.global.Set("path", path)
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
