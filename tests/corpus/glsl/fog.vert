#version 450
// Per-vertex exponential fog factor next to the lighting inputs.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec2 a_uv;
layout(binding = 0) uniform Frame { mat4 mvp; mat4 mv; float density; } f;
out vec2 v_uv;
out float v_fog;
out float v_unused;
void main() {
    vec4 eye = f.mv * vec4(a_pos, 1.0);
    float d = length(eye.xyz);
    v_fog = clamp(exp(-f.density * d * d), 0.0, 1.0);
    v_uv = a_uv;
    v_unused = d;
    gl_Position = f.mvp * vec4(a_pos, 1.0);
}
