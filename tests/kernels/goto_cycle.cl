kernel void k(global int *o) {
int x = get_global_id(0);
int fuel = 6;
int c0 = 0;
int c1 = 0;
int c2 = 0;
int c3 = 0;
int c4 = 0;
int c5 = 0;
int c6 = 0;
int c7 = 0;
int c8 = 0;
int c9 = 0;
if (fuel > 0 && x % 2 == 0) { fuel--; goto L8; }
if (x % 4 < 2) {
if (x % 4 < 2) {
if (fuel > 0 && x % 4 == 0) { fuel--; goto L1; }
if (x % 3 < 2) {
if (fuel > 0 && x % 6 == 1) { fuel--; goto L1; }
x = (x * 6 + 86) % 1000;
} else {
L0: ;
x = (x * 12 + 83) % 1000;
if (fuel > 0 && x % 2 == 0) { fuel--; goto L7; }
x = (x * 15 + 71) % 1000;
}
} else {
x = (x * 9 + 61) % 1000;
for (; c0 < 1; c0++) {
if (fuel > 0 && x % 6 == 0) { fuel--; goto L10; }
L1: ;
x = (x * 18 + 5) % 1000;
x = (x * 30 + 58) % 1000;
x = x + 1;
}
if (x % 3 < 2) {
x = (x * 27 + 1) % 1000;
if (fuel > 0 && x % 3 == 0) { fuel--; goto L7; }
} else {
if (fuel > 0 && x % 2 == 1) { fuel--; goto L10; }
x = (x * 36 + 31) % 1000;
}
if (fuel > 0 && x % 4 == 1) { fuel--; goto L11; }
}
if (fuel > 0 && x % 4 == 0) { fuel--; goto L7; }
if (fuel > 0 && x % 6 == 1) { fuel--; goto L3; }
if (x % 4 < 2) {
if (fuel > 0 && x % 6 == 0) { fuel--; goto L2; }
for (; c1 < 1; c1++) {
x = (x * 36 + 24) % 1000;
x = (x * 6 + 3) % 1000;
x = x + 1;
}
if (fuel > 0 && x % 3 == 0) { fuel--; goto L11; }
} else {
x = (x * 26 + 99) % 1000;
}
} else {
while (c2 < 3) {
c2++;
for (; c3 < 1; c3++) {
L2: ;
x = x + 1;
}
L3: ;
}
x = (x * 37 + 37) % 1000;
}
if (x % 2 < 2) {
if (x % 4 < 2) {
if (x % 2 < 2) {
x = (x * 30 + 46) % 1000;
if (fuel > 0 && x % 4 == 1) { fuel--; goto L4; }
} else {
x = (x * 34 + 39) % 1000;
if (fuel > 0 && x % 3 == 0) { fuel--; goto L6; }
x = (x * 27 + 92) % 1000;
x = (x * 39 + 91) % 1000;
}
if (fuel > 0 && x % 2 == 1) { fuel--; goto L11; }
L4: ;
} else {
if (x % 2 < 2) {
x = (x * 36 + 18) % 1000;
} else {
x = (x * 39 + 48) % 1000;
if (fuel > 0 && x % 6 == 1) { fuel--; goto L7; }
x = (x * 24 + 29) % 1000;
}
x = (x * 38 + 22) % 1000;
}
} else {
if (x % 2 < 2) {
if (x % 4 < 2) {
if (fuel > 0 && x % 3 == 0) { fuel--; goto L1; }
} else {
if (fuel > 0 && x % 3 == 0) { fuel--; goto L11; }
}
} else {
for (; c4 < 2; c4++) {
x = (x * 28 + 73) % 1000;
x = (x * 2 + 61) % 1000;
x = x + 1;
}
if (fuel > 0 && x % 6 == 1) { fuel--; goto L6; }
L5: ;
}
while (c5 < 1) {
c5++;
for (; c6 < 2; c6++) {
x = (x * 2 + 74) % 1000;
x = x + 1;
}
if (x % 5 == 1) break;
for (; c7 < 3; c7++) {
L6: ;
x = x + 1;
}
}
x = (x * 21 + 52) % 1000;
}
if (x % 4 < 2) {
x = (x * 35 + 4) % 1000;
} else {
x = (x * 29 + 67) % 1000;
if (fuel > 0 && x % 2 == 0) { fuel--; goto L0; }
x = (x * 28 + 29) % 1000;
}
L7: ;
if (fuel > 0 && x % 2 == 0) { fuel--; goto L5; }
if (x % 3 < 2) {
x = (x * 37 + 96) % 1000;
L8: ;
for (; c8 < 3; c8++) {
while (c9 < 3) {
c9++;
L9: ;
L10: ;
}
x = x + 1;
}
} else {
L11: ;
}
o[get_global_id(0)] = x;
}
