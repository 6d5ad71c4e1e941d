#version 450
// Curve rendering with a TES fed directly by the VS (no TCS in this pair).
layout(location = 0) in vec3 a_ctrl;
layout(location = 1) in float a_width;
out float t_width;
out vec3 t_color;
void main() {
    t_width = a_width;
    t_color = vec3(a_width, 0.5, 1.0 - a_width);
    gl_Position = vec4(a_ctrl, 1.0);
}
