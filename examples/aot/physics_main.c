/* Call the built physics library from C:
 *     examples/aot/run_c.sh build/physics
 */
#include <math.h>
#include <stdio.h>

#include "physics.h"

int main(void) {
    float x[64], v[64], x2[64], v2[64], energy, gx[64], gv[64], target[64] = {0};
    for (int i = 0; i < 64; i++) {
        x[i] = (float)sin(3.14159265358979 * i / 63.0);
        v[i] = 0.0f;
    }
    const float dt = 0.05f;
    for (int step = 0; step < 100; step++) {
        if (physics_step_0(x, v, &dt, x2, v2) != 0) return 1;
        for (int i = 0; i < 64; i++) { x[i] = x2[i]; v[i] = v2[i]; }
    }
    /* energy takes the dict {'x': ..., 'v': ...}: its leaves in sorted key order (v, x) */
    if (physics_energy(v, x, &energy) != 0) return 1;
    if (physics_loss_grad(x, v, target, gx, gv) != 0) return 1;
    double nx = 0, nv = 0;
    for (int i = 0; i < 64; i++) { nx += gx[i] * gx[i]; nv += gv[i] * gv[i]; }
    printf("energy after 100 steps: %.6g\n", energy);
    printf("|d loss / d x0| = %.6g  |d loss / d v0| = %.6g\n", sqrt(nx), sqrt(nv));
    return 0;
}
