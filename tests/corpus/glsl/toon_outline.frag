#version 450
flat in int v_band;
noperspective in vec2 v_screen;
centroid in float v_ndl;
layout(location = 0) out vec4 color;
void main() {
    float shade;
    switch (v_band) {
        case 0: shade = 0.3; break;
        case 1: shade = 0.6; break;
        default: shade = 1.0; break;
    }
    float rim = smoothstep(0.0, 0.2, v_ndl);
    color = vec4(vec3(shade * rim), 1.0) + vec4(fract(v_screen * 100.0), 0.0, 0.0) * 0.01;
}
