pragma circom 2.0.0;

// 65 = 2^6 + 1 constraints, x_i = x_(i-1)^2 + i: the proving domain doubles to 128 for
// a single constraint past 64.
template OverPower(n) {
    signal input x0;
    signal output out;
    signal x[n + 1];

    x[0] <== x0;
    for (var i = 1; i <= n; i++) {
        x[i] <== x[i - 1] * x[i - 1] + i;
    }
    out <== x[n];
}

component main = OverPower(65);
