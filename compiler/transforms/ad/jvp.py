"""Forward mode: Core -> Core. `f(x, y)` becomes `f_jvp(x, y, x_dot) -> (out, out_dot)`.

Expects Core in SSA form (loop bodies may end in carried copies). Guarantees: the output is
Core again (so it can be transformed again); every active name `v` gets one tangent name
`v_dot` computed right after `v`; control flow is kept as it is (tangents of loop-carried
names are carried too); calls to the user's other functions call their own jvp, made on
demand, so recursion works.
"""
from __future__ import annotations

from redraft.compiler.core import ir
from redraft.compiler.transforms.calls import callees, value_calls
from redraft.compiler.transforms.common import (ADD, Names, TransformError, active_names,
                                                bind_call, bind_defaults,
                                                broadcasting_simplifier, expr_is_active,
                                                helper, is_transformable_callable,
                                                positional_args, unsupported_op,
                                                where)
from redraft.compiler.transforms.calls.inline import inline, rule_args
from redraft.compiler.transforms.ad.loops import index_active_loops
from redraft.compiler.primitives.registry import rules_for
from redraft.compiler.transforms.ad.stable_forms import fuse_stable_forms
from redraft.compiler.transforms.tidy import remove_dead_code, tidy


def jvp_function(fn: ir.Function, active: tuple[bool, ...], name: str | None = None
                 ) -> ir.Function:
    """The forward-mode derivative of `fn` in the parameters flagged in `active`."""
    fn = index_active_loops(fuse_stable_forms(bind_defaults(fn, len(active))),
                            {p for p, a in zip(fn.params, active) if a})
    mode = ForwardMode(fn, active)
    made = mode.run(name or f"{fn.name}_jvp")
    return tidy(mode.primal_calls_where_tangents_unread(made))


class ForwardMode:
    def __init__(self, fn: ir.Function, active: tuple[bool, ...]):
        self.fn = fn
        self.names = Names(fn)
        self.active_params = [p for p, a in zip(fn.params, active) if a]
        self.active = active_names(fn, set(self.active_params))
        # the user's calls made jvp calls: (that call, its unpacking, the user's statement)
        self.user_calls: list[tuple[ir.Assign, list[ir.Stmt], ir.Assign]] = []

    def dot(self, name: str) -> str:
        return self.names.derived_name(name, "dot")

    def tangent(self, a: ir.Atom, out: list, origin) -> ir.Atom:
        """The tangent of atom `a` (zeros for inactive values)."""
        if isinstance(a, ir.Var) and a.name in self.active:
            return ir.Var(self.dot(a.name))
        if isinstance(a, ir.Const) and not _numeric(a.value):
            return ir.Const(None)  # a slice, string or None in a tuple has no tangent
        tmp = self.names.fresh("zero")
        out.append(ir.Assign((tmp,), ir.Call(helper("zeros_like"), (a,)), origin))
        return ir.Var(tmp)

    def run(self, name: str) -> ir.Function:
        origin = (self.fn.filename, self.fn.firstline)
        body = [ir.Assign((self.dot(p),), ir.Call(helper("zeros_like"), (ir.Var(p),)), origin)
                for p in self.fn.params  # not differentiated, but a loop carries it into
                if p in self.active and p not in self.active_params]  # active values
        body += self.block(self.fn.body)
        params = self.fn.params + tuple(self.dot(p) for p in self.active_params)
        return ir.Function(name, params, body, (), self.fn.filename, self.fn.firstline,
                           None, {"transform": "jvp"})

    def block(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in body:
            self.stmt(s, out)
        return out

    def stmt(self, s: ir.Stmt, out: list) -> None:
        if isinstance(s, ir.Assign):
            self.assign(s, out)
        elif isinstance(s, ir.ExprStmt):
            out.append(s)
        elif isinstance(s, ir.If):
            out.append(ir.If(s.cond, self.block(s.body), self.block(s.orelse), s.origin))
        elif isinstance(s, ir.For):
            body = self.block(s.body)
            if s.target in self.active:  # active elsewhere, but a range index here
                body.insert(0, ir.Assign((self.dot(s.target),), ir.Call(
                    helper("zeros_like"), (ir.Var(s.target),)), s.origin))
            out.append(ir.For(s.target, s.iter, body, s.origin))
        elif isinstance(s, ir.While):
            out.append(ir.While(self.block(s.cond_body), s.cond, self.block(s.body), s.origin))
        elif isinstance(s, ir.Return):
            tangent = self.tangent(s.value, out, s.origin)
            pair = self.names.fresh("out")
            out.append(ir.Assign((pair,), ir.Tuple((s.value, tangent)), s.origin))
            out.append(ir.Return(ir.Var(pair), s.origin))
        else:
            raise TypeError(f"not a Core statement: {s!r}")

    # ---- assignments -----------------------------------------------------------------------------
    def assign(self, s: ir.Assign, out: list) -> None:
        targets_active = [t for t in s.targets if t in self.active]
        if not targets_active:
            out.append(s)
            return
        e = s.expr
        if not expr_is_active(e, self.active):
            out.append(s)
            for t in targets_active:
                out.append(ir.Assign((self.dot(t),), ir.Call(helper("zeros_like"),
                                                             (ir.Var(t),)), s.origin))
            return
        if isinstance(e, ir.Call) and isinstance(e.fn, ir.Ref) and rules_for(e.fn.value) is None:
            self.call_user_function(s, out)
            return
        if isinstance(e, ir.Call) and isinstance(e.fn, (ir.Var, ir.Attr)):
            self.call_function_value(s, out)
            return
        out.append(s)
        if isinstance(e, ir.Call):
            tangent = self.call_tangent(s, out)
        else:
            tangent = self.structural_tangent(e, out, s.origin)
        self.bind_tangents(s, tangent, out)

    def bind_tangents(self, s: ir.Assign, tangent: ir.Expr, out: list) -> None:
        dots = tuple(self.dot(t) for t in s.targets)
        if len(dots) == 1 and tangent == ir.Var(dots[0]):
            return  # the rule already wrote the tangent under its name
        if len(dots) == 1:
            out.append(ir.Assign(dots, tangent, s.origin))
            return
        if not isinstance(tangent, (ir.Var, ir.Const)):
            tmp = self.names.fresh("t_dot")
            out.append(ir.Assign((tmp,), tangent, s.origin))
            tangent = ir.Var(tmp)
        out.append(ir.Assign(dots, tangent, s.origin))

    def structural_tangent(self, e: ir.Expr, out: list, origin) -> ir.Expr:
        if isinstance(e, ir.Var):
            return ir.Var(self.dot(e.name))
        if isinstance(e, ir.Tuple):
            return ir.Tuple(tuple(self.tangent(a, out, origin) for a in e.items))
        if isinstance(e, ir.List):
            return ir.List(tuple(self.tangent(a, out, origin) for a in e.items))
        if isinstance(e, ir.Attr):
            return ir.Call(helper("attr_tangent"), (e.obj, self.tangent(e.obj, out, origin),
                                                    ir.Const(e.name)))
        raise TransformError(f"{where(origin)}cannot differentiate {e!r}")

    def call_tangent(self, s: ir.Assign, out: list) -> ir.Atom:
        call = s.expr
        if not isinstance(call.fn, ir.Ref):
            raise unsupported_op(call, s.origin, "forward-mode")
        rules = rules_for(call.fn.value)
        if rules.refusal:
            raise TransformError(f"{where(s.origin)}{rules.refusal}")
        bound = bind_call(rules, call, s.origin)
        active = [p for p, a in bound.items() if isinstance(a, ir.Var)
                  and a.name in self.active and p not in rules.static]
        ans = ir.Var(s.targets[0]) if len(s.targets) == 1 else ir.Tuple(
            tuple(ir.Var(t) for t in s.targets))
        joint = _joint(rules, active)
        if joint is not None:
            order = _joint_order(rules, joint)
            leading = [ir.Var(self.dot(bound[p].name)) for p in order] + [ans]
            stmts, result = inline(joint, rule_args(joint, bound, leading), self.names.fresh,
                                   s.origin, result_name=self.single_dot(s))
            out.extend(stmts)
            return result
        contributions = []
        for p in active:
            rule = rules.jvp.get(p)
            if rule is None:
                raise TransformError(f"{where(s.origin)}`{call.fn.path}` has no forward rule "
                                     f"for its argument `{p}`")
            leading = [ir.Var(self.dot(bound[p].name)), ans]
            name = self.single_dot(s) if len(active) == 1 else None
            stmts, result = inline(rule, rule_args(rule, bound, leading), self.names.fresh,
                                   s.origin, broadcasting_simplifier(bound, p), result_name=name)
            out.extend(stmts)
            contributions.append(result)
        total = contributions[0]
        for k, c in enumerate(contributions[1:]):
            last = k == len(contributions) - 2 and self.single_dot(s) is not None
            tmp = self.single_dot(s) if last else self.names.fresh("t")
            out.append(ir.Assign((tmp,), ir.Call(ADD, (total, c)), s.origin))
            total = ir.Var(tmp)
        return total

    def single_dot(self, s: ir.Assign) -> str | None:
        return self.dot(s.targets[0]) if len(s.targets) == 1 else None

    def call_user_function(self, s: ir.Assign, out: list) -> None:
        """`y = g(a, b)` becomes `y, y_dot = g_jvp(a, b, a_dot)`."""
        call = s.expr
        if not is_transformable_callable(call.fn.value):
            raise unsupported_op(call, s.origin, "forward-mode")
        from redraft.compiler.transforms.calls.custom import custom_vjp
        if isinstance(call.fn.value, custom_vjp) and call.fn.value.jvp_rule is None:
            self.custom_vjp_call(s, out)
            return
        args = positional_args(call, s.origin)
        mask = tuple(isinstance(a, ir.Var) and a.name in self.active for a in args)
        callee = callees.jvp_of(call.fn.value, mask)
        tangents = tuple(ir.Var(self.dot(a.name)) for a, m in zip(args, mask) if m)
        ref = ir.Ref(callee, f"{call.fn.path.replace('.', '_')}_jvp")
        pair = self.names.fresh("t")
        made = ir.Assign((pair,), ir.Call(ref, args + tangents), s.origin)
        out.append(made)
        start = len(out)
        self.unpack_pair(s, pair, out)
        self.user_calls.append((made, out[start:], s))

    def primal_calls_where_tangents_unread(self, fn: ir.Function) -> ir.Function:
        """`fn` with each call of a user's function whose result's tangent nothing (live)
        reads made as the user wrote it, `y = g(a)`, not `y, y_dot = g_jvp(a, a_dot)`: the
        forward pass of derivative code (jvp of grad, hessian) computes no tangent it
        drops, and a custom_vjp function's result, which has none, is not asked for one."""
        read = ir.block_reads(remove_dead_code(fn.body))
        replaced: dict[int, list[ir.Stmt]] = {}
        for made, unpacking, s in self.user_calls:
            if not {self.dot(t) for t in s.targets} & read:
                replaced[id(made)] = [s]
                replaced.update({id(u): [] for u in unpacking})
        if not replaced:
            return fn
        return ir.Function(fn.name, fn.params, _replaced(fn.body, replaced), fn.defaults,
                           fn.filename, fn.firstline, fn.doc, fn.meta)

    def call_function_value(self, s: ir.Assign, out: list) -> None:
        """`y = f(a)` through a function value `f` (known when the code runs) becomes
        `f_jvp = value_calls.jvp_of(f, mask)` and `y, y_dot = f_jvp(f, a, f_dot, a_dot)`;
        a method call `y = o.m(a)`, `m_jvp = value_calls.method_jvp_of(o, "m", mask)` and
        `y, y_dot = m_jvp(o, a, o_dot, a_dot)`."""
        call = s.expr
        operands = value_calls.operands(call, s.origin)
        mask = tuple(isinstance(a, ir.Var) and a.name in self.active for a in operands)
        callee = self.names.fresh(f"{value_calls.callee_name(call)}_jvp")
        out.append(ir.Assign((callee,), value_calls.transform_request(call, "jvp", mask), s.origin))
        tangents = tuple(ir.Var(self.dot(a.name)) for a, m in zip(operands, mask) if m)
        pair = self.names.fresh("t")
        out.append(ir.Assign((pair,), ir.Call(ir.Var(callee), operands + tangents), s.origin))
        self.unpack_pair(s, pair, out)

    def custom_vjp_call(self, s: ir.Assign, out: list) -> None:
        """`y = f(a)`, f a custom_vjp, is kept as written; y's tangent is a refusal that
        raises JAX's TypeError when it runs. Where nothing reads it (the forward pass of
        derivative code: jvp of grad, hessian), tidy drops it, so forward over reverse
        differentiates the user's fwd and bwd rules, as JAX's does."""
        out.append(s)
        name = ir.Const(getattr(s.expr.fn.value, "__name__", "f"))
        for t in s.targets:
            out.append(ir.Assign((self.dot(t),), ir.Call(helper("custom_vjp_tangent"),
                                                         (name,)), s.origin))

    def unpack_pair(self, s: ir.Assign, pair: str, out: list) -> None:
        """`s`'s targets and their tangents from `pair`, a callee's (result, tangent)."""
        if len(s.targets) == 1:
            out.append(ir.Assign((s.targets[0], self.dot(s.targets[0])), ir.Var(pair),
                                 s.origin))
            return
        primal, tangent = self.names.fresh("t"), self.names.fresh("t_dot")
        out.append(ir.Assign((primal, tangent), ir.Var(pair), s.origin))
        out.append(ir.Assign(s.targets, ir.Var(primal), s.origin))
        out.append(ir.Assign(tuple(self.dot(t) for t in s.targets), ir.Var(tangent), s.origin))


def _replaced(body: list[ir.Stmt], replaced: dict[int, list[ir.Stmt]]) -> list[ir.Stmt]:
    """`body` with each statement whose id is a key of `replaced` replaced by its value."""
    out: list[ir.Stmt] = []
    for s in body:
        if id(s) in replaced:
            out.extend(replaced[id(s)])
            continue
        out.append(ir.with_blocks(s, lambda block: _replaced(block, replaced)))
    return out


def _jvp_of_callee(fn, mask: tuple[bool, ...]) -> tuple[ir.Function, ir.Function]:
    """A called function's Core and its jvp: callees.jvp_of's transform (installed below)."""
    from redraft.compiler.transforms.calls.callable_core import core_of
    core = core_of(fn)
    return core, jvp_function(core, mask)


callees.install_transformer("jvp", _jvp_of_callee)


def _joint(rules, active: list[str]):
    for names, rule in rules.joint_jvp.items():
        if set(names) == set(active):
            return rule
    return None


def _joint_order(rules, joint) -> tuple[str, ...]:
    return next(names for names, rule in rules.joint_jvp.items() if rule is joint)


def _numeric(value) -> bool:
    """Whether a Core literal is a number, or a tuple holding one (it has a zero tangent)."""
    if isinstance(value, tuple):
        return any(_numeric(v) for v in value)
    return isinstance(value, (bool, int, float, complex))
