pragma circom 2.0.0;

// circomlib templates: comparisons, a multiplexer and a bit decomposition, whose R1CS
// has linear constraints (A or B empty); three public inputs, eight public outputs.
include "circomlib/circuits/bitify.circom";
include "circomlib/circuits/comparators.circom";
include "circomlib/circuits/mux1.circom";

template Mix() {
    signal input a;
    signal input b;
    signal input sel;      // 0 or 1
    signal input secret;   // private, < 2^16
    signal output below;   // secret < a
    signal output same;    // a == b
    signal output picked;  // sel ? secret : a
    signal output mixed;   // 3a + 5b - secret: a linear constraint
    signal output low[4];  // the low bits of secret

    component lt = LessThan(16);
    lt.in[0] <== secret;
    lt.in[1] <== a;
    below <== lt.out;

    component eq = IsEqual();
    eq.in[0] <== a;
    eq.in[1] <== b;
    same <== eq.out;

    sel * (sel - 1) === 0;
    component mux = Mux1();
    mux.c[0] <== a;
    mux.c[1] <== secret;
    mux.s <== sel;
    picked <== mux.out;

    mixed <== 3 * a + 5 * b - secret;

    component bits = Num2Bits(16);
    bits.in <== secret;
    for (var i = 0; i < 4; i++) {
        low[i] <== bits.out[i];
    }
}

component main {public [a, b, sel]} = Mix();
