"""Writing circuits in Python, in the spirit of bellman's ConstraintSystem.

    cs = ConstraintSystem()
    x = cs.private(3)
    out = cs.public(35)
    x2 = cs.private(9)
    cs.enforce(x, x, x2, name="x^2")
    x3 = cs.private(27)
    cs.enforce(x2, x, x3, name="x^3")
    cs.enforce(x3 + x + 5, ONE, out, name="out")
    r1cs, witness = cs.to_r1cs(), cs.witness()

Variables are allocated in any order; ``to_r1cs`` numbers the wires as R1CS requires:
wire 0 = ONE, then the public variables in allocation order, then the private ones in
allocation order. Integers in a linear combination are multiples of ONE; coefficients
and values are taken mod r. With ``ConstraintSystem(witness=False)`` (synthesis for a
setup) values are ignored and may be None.

One Python object per term: meant for circuits up to ~10^5 constraints; numba_cuzk.circuits.builtin
builds large ones with numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Union

import numpy as np

from numba_cuzk.field.codec import to_limbs
from numba_cuzk.field.params import FR
from numba_cuzk.groth16.r1cs import R1CS, SparseMatrix

R = FR.modulus


@dataclass(frozen=True)
class Variable:
    """A wire. ``key`` >= 0: public variable ``key`` (0 is ONE); ``key`` < 0: private
    variable ``-key - 1``. Wire numbers are assigned by ``ConstraintSystem.to_r1cs``."""

    key: int

    def __add__(self, other: Linear) -> LinearCombination:
        return LinearCombination.of(self) + other

    __radd__ = __add__

    def __sub__(self, other: Linear) -> LinearCombination:
        return LinearCombination.of(self) - other

    def __rsub__(self, other: Linear) -> LinearCombination:
        return LinearCombination.of(other) - self

    def __neg__(self) -> LinearCombination:
        return -LinearCombination.of(self)

    def __mul__(self, k: int) -> LinearCombination:
        return LinearCombination.of(self) * k

    __rmul__ = __mul__


ONE = Variable(0)


class LinearCombination:
    """sum of coefficient * variable, coefficients in [1, r) (zero terms are dropped)."""

    def __init__(self, terms: dict[int, int] | None = None) -> None:
        self.terms: dict[int, int] = {key: k for key, k in (terms or {}).items() if k % R}

    @staticmethod
    def of(x: Linear) -> LinearCombination:
        """A Variable, an int (a multiple of ONE) or a LinearCombination as one."""
        if isinstance(x, LinearCombination):
            return x
        if isinstance(x, Variable):
            return LinearCombination({x.key: 1})
        if isinstance(x, Integral):
            return LinearCombination({ONE.key: int(x) % R})
        raise TypeError(f"not a linear combination: {type(x).__name__}")

    def __add__(self, other: Linear) -> LinearCombination:
        terms = dict(self.terms)
        for key, k in LinearCombination.of(other).terms.items():
            terms[key] = (terms.get(key, 0) + k) % R
        return LinearCombination(terms)

    __radd__ = __add__

    def __sub__(self, other: Linear) -> LinearCombination:
        return self + -LinearCombination.of(other)

    def __rsub__(self, other: Linear) -> LinearCombination:
        return LinearCombination.of(other) - self

    def __neg__(self) -> LinearCombination:
        return self * -1

    def __mul__(self, k: int) -> LinearCombination:
        if not isinstance(k, Integral):
            # Variable * Variable lands here: a product must be allocated and enforced.
            raise TypeError("a linear combination can only be multiplied by an int; allocate a product "
                            "with cs.private(value) and cs.enforce(a, b, product)")
        return LinearCombination({key: c * int(k) % R for key, c in self.terms.items()})

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return " + ".join(f"{k}*v{key}" for key, k in self.terms.items()) or "0"


Linear = Union[Variable, LinearCombination, int]


class ConstraintSystem:
    """Allocates variables, records constraints <a, w> * <b, w> = <c, w>, and holds the
    assignment (the witness) unless built with ``witness=False``."""

    def __init__(self, witness: bool = True) -> None:
        self.has_witness = witness
        self._public_values: list[int | None] = [1]  # index 0 is ONE
        self._private_values: list[int | None] = []
        # Per matrix A, B, C: the keys and coefficients of all rows, back to back, and
        # each row's term count (CSR without the prefix sum).
        self._keys: tuple[list[int], ...] = ([], [], [])
        self._coefficients: tuple[list[int], ...] = ([], [], [])
        self._row_lengths: tuple[list[int], ...] = ([], [], [])
        self.constraint_names: list[str | None] = []

    @property
    def n_public(self) -> int:
        return len(self._public_values) - 1

    @property
    def n_wires(self) -> int:
        return len(self._public_values) + len(self._private_values)

    @property
    def n_constraints(self) -> int:
        return len(self.constraint_names)

    def public(self, value: int | None = None) -> Variable:
        """A new public input (wire 1 + its allocation index among public ones)."""
        self._public_values.append(self._checked(value, f"public variable {self.n_public + 1}"))
        return Variable(self.n_public)

    def private(self, value: int | None = None) -> Variable:
        """A new private (auxiliary) variable."""
        self._private_values.append(self._checked(value, f"private variable {len(self._private_values)}"))
        return Variable(-len(self._private_values))

    def value(self, x: Linear) -> int | None:
        """The value of a linear combination under the assignment (None without one)."""
        if not self.has_witness:
            return None
        return sum(k * self._value_of(key) for key, k in LinearCombination.of(x).terms.items()) % R

    def enforce(self, a: Linear, b: Linear, c: Linear, name: str | None = None) -> None:
        """Add the constraint a * b = c (checked against the witness by check_witness)."""
        for m, x in enumerate((a, b, c)):
            terms = LinearCombination.of(x).terms
            self._keys[m].extend(terms)
            self._coefficients[m].extend(terms.values())
            self._row_lengths[m].append(len(terms))
        self.constraint_names.append(name)

    def to_r1cs(self) -> R1CS:
        """The constraints as an R1CS: wire 0 = ONE, then the public variables, then the
        private ones, each group in allocation order."""
        n_inputs = len(self._public_values)
        a, b, c = (self._matrix(m, n_inputs) for m in range(3))
        return R1CS(n_wires=self.n_wires, n_public=self.n_public, a=a, b=b, c=c)

    def witness(self) -> np.ndarray:
        """(8, n_wires) uint32 canonical Fr, in to_r1cs's wire order."""
        if not self.has_witness:
            raise ValueError("this ConstraintSystem was built with witness=False: it has no values")
        return to_limbs(self._public_values + self._private_values, FR)

    def _checked(self, value: int | None, what: str) -> int | None:
        if not self.has_witness:
            return None
        if not isinstance(value, Integral):
            raise ValueError(f"{what} needs an int value (got {value!r}); build with witness=False for a setup")
        return int(value) % R

    def _value_of(self, key: int) -> int:
        return self._public_values[key] if key >= 0 else self._private_values[-key - 1]

    def _matrix(self, m: int, n_inputs: int) -> SparseMatrix:
        keys = np.array(self._keys[m], dtype=np.int64)
        wires = np.where(keys >= 0, keys, n_inputs - keys - 1)  # private j = -key - 1 -> n_inputs + j
        indptr = np.zeros(self.n_constraints + 1, dtype=np.int64)
        np.cumsum(self._row_lengths[m], out=indptr[1:])
        return SparseMatrix(indptr=indptr, indices=wires.astype(np.uint32),
                            values=to_limbs(self._coefficients[m], FR))
