pragma circom 2.0.0;

// Only multiplications: x_0 = a * b, then x_i = x_(i-1) * (a or b). 29 constraints, a
// public input and a public output: 29 + 2 + 1 = 32 rows fill the proving domain exactly.
template Multiply(n) {
    signal input a;
    signal input b;
    signal output c;
    signal x[n];

    x[0] <== a * b;
    for (var i = 1; i < n; i++) {
        x[i] <== x[i - 1] * (i % 2 == 0 ? a : b);
    }
    c <== x[n - 1];
}

component main {public [a]} = Multiply(29);
