#version 450
// Toon shading: flat band index, screen-space (noperspective) edge coordinate.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(binding = 0) uniform Toon { mat4 mvp; vec3 light; } u;
flat out int v_band;
noperspective out vec2 v_screen;
centroid out float v_ndl;
void main() {
    float ndl = dot(normalize(a_normal), normalize(u.light));
    v_ndl = ndl;
    v_band = int(floor(clamp(ndl, 0.0, 0.999) * 3.0));
    gl_Position = u.mvp * vec4(a_pos, 1.0);
    v_screen = gl_Position.xy / gl_Position.w;
}
