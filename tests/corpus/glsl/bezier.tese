#version 450
layout(isolines, equal_spacing) in;
in float t_width[];
in vec3 t_color[];
layout(binding = 0) uniform Curve { mat4 mvp; } c;
out vec3 g_color;
out float g_t;
void main() {
    float u = gl_TessCoord.x;
    float a = (1.0 - u) * (1.0 - u), b = 2.0 * u * (1.0 - u), cc = u * u;
    vec4 p = gl_in[0].gl_Position * a + gl_in[1].gl_Position * b + gl_in[2].gl_Position * cc;
    g_color = t_color[0] * a + t_color[1] * b + t_color[2] * cc;
    g_t = u * t_width[0];
    gl_Position = c.mvp * p;
}
